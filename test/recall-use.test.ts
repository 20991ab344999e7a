import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushHandovers as flushRecalls } from '../src/services/ledger/handover.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * Recall counts (docs/search.md, "Recall counts"): what search and the context endpoint hand to a
 * caller is counted in the process and written by a flush (the server's own, called here rather
 * than waited for), then shown on GET memory as `use`.
 */
let server: TestServer;
let t: Tenant;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  t = await newTenant(server.url, server.adminKey);
});
afterAll(async () => {
  await server?.close();
});

const use = async (id: string) => {
  const res = await t.api('GET', `/v1/memory/collections/notes/memories/${id}`);
  expect(res.status).toBe(200);
  return res.body.use as { recalls: number; last_recalled_at: string | null; confirmations: number; last_confirmed_at: string | null };
};
const rows = async (id: string) => (await server.app.db.query<{ n: number }>('select count(*)::int as n from memory_use where memory_id = $1', [id]))[0]!.n;

describe('recall counts', () => {
  it('counts what search and context hand back, once written; nothing for a memory never returned; a deleted memory takes its row', async () => {
    const res = await t.api('POST', '/v1/memory/collections/notes/memories/bulk', [
      { text: 'The staging server is called ares.' },
      { text: 'Coffee beans are in the left cupboard.' },
      { text: 'The quarterly report is due in April.' },
    ]);
    expect(res.status).toBe(201);
    const [staging, coffee, report] = res.body.ids as [string, string, string];
    const started = Date.now();

    const search = async (query: string) => {
      const found = await t.api('POST', '/v1/memory/collections/notes/search', { query, limit: 1 });
      expect(found.status).toBe(200);
      return found.body.results.map((r: { id: string }) => r.id);
    };
    // Twice the same search (the second from the answer cache: still handed to the caller), then the context block.
    expect(await search('what is the staging server called')).toEqual([staging]);
    expect(await search('what is the staging server called')).toEqual([staging]);
    const context = await t.api('POST', '/v1/memory/collections/notes/context', { query: 'what is the staging server called', max_tokens: 500, limit: 1 });
    expect(context.status).toBe(200);
    expect(context.body.query.memories.map((m: { id: string }) => m.id)).toEqual([staging]);
    expect(await search('where are the coffee beans')).toEqual([coffee]);

    await flushRecalls(server.app);
    const staged = await use(staging);
    expect(staged.recalls).toBe(3);
    expect(Date.parse(staged.last_recalled_at!)).toBeGreaterThanOrEqual(started - 1000);
    expect(Date.parse(staged.last_recalled_at!)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(staged).toMatchObject({ confirmations: 0, last_confirmed_at: null });
    expect((await use(coffee)).recalls).toBe(1);
    // The context endpoint's search candidates it did not hand on are not counted, nor is a memory never returned.
    expect(await use(report)).toEqual({ recalls: 0, last_recalled_at: null, confirmations: 0, last_confirmed_at: null });
    expect(await rows(report)).toBe(0);

    // A further flush adds to the row; a memory deleted with counts still waiting is left out, and its row goes with it.
    expect(await search('what is the staging server called')).toEqual([staging]);
    expect(await search('where are the coffee beans')).toEqual([coffee]);
    expect(await rows(coffee)).toBe(1);
    expect((await t.api('DELETE', `/v1/memory/collections/notes/memories/${coffee}`)).status).toBe(204);
    expect(await rows(coffee)).toBe(0);
    await flushRecalls(server.app);
    expect((await use(staging)).recalls).toBe(4);
    expect(await rows(coffee)).toBe(0);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)("on a tenant's own database", () => {
  const base = process.env.TEST_DATABASE_URL!;
  const own = `orgmem_use_${randomBytes(4).toString('hex')}`;
  let admin: postgres.Sql;
  beforeAll(async () => {
    admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${own}`);
  });
  afterAll(async () => {
    // With force: the server's pool on it is still open (the server closes after this file).
    await admin?.unsafe(`drop database if exists ${own} with (force)`);
    await admin?.end();
  });

  it('writes the counts to the database that holds the memory', async () => {
    const u = await newTenant(server.url, server.adminKey);
    const url = new URL(base);
    url.pathname = `/${own}`;
    expect((await u.api('PUT', '/v1/memory/database/config', { connection_string: url.toString() })).status).toBe(200);
    const created = await u.api('POST', '/v1/memory/collections/notes/memories', { text: 'The release train leaves on Tuesdays.' });
    expect(created.status).toBe(201);
    const found = await u.api('POST', '/v1/memory/collections/notes/search', { query: 'release train', limit: 1 });
    expect(found.body.results.map((r: { id: string }) => r.id)).toEqual([created.body.id]);
    await flushRecalls(server.app);
    expect((await u.api('GET', `/v1/memory/collections/notes/memories/${created.body.id}`)).body.use.recalls).toBe(1);
    const ownDb = postgres(url.toString(), { max: 1, onnotice: () => {} });
    try {
      expect(await ownDb`select recalls::int as recalls from memory_use where memory_id = ${created.body.id}`).toEqual([{ recalls: 1 }]);
    } finally {
      await ownDb.end();
    }
    expect(await rows(created.body.id)).toBe(0);
  });
});

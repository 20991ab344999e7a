import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { trpcClient } from './support/transports.ts';

const remember = (c: string) => `/v1/memory/collections/${c}/remember`;

describe('remember with an idempotency key', () => {
  let server: TestServer;
  beforeAll(async () => {
    // No worker: the jobs stay queued, and what the requests stored is all there is to count.
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
  });
  afterAll(() => server?.close());
  const send = (t: Tenant, collection: string, body: unknown, key?: string, query = '') =>
    call(server.url, 'POST', `${remember(collection)}${query}`, { key: t.key, body, headers: key ? { 'idempotency-key': key } : {} });
  const stored = async (t: Tenant) => {
    const [memories] = await server.app.db.query<{ n: number }>('select count(*)::int as n from memories where tenant_id = $1', [t.id]);
    const [jobs] = await server.app.db.query<{ n: number }>('select count(*)::int as n from extraction_jobs where tenant_id = $1', [t.id]);
    return { memories: memories!.n, jobs: jobs!.n };
  };

  it('answers the first job for the same key and body and stores nothing more, over REST and tRPC', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { content: 'We deploy on Fridays.', observed_at: '2026-11-20T10:00:00Z' };
    const first = await send(t, 'notes', body, 'turn-1');
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ job_id: expect.any(String), state: 'queued' });
    const again = await send(t, 'notes', body, 'turn-1');
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const viaTrpc = await trpcClient(server.url, t.key).graph.remember.mutate({ collection: 'notes', ...body, idempotency_key: 'turn-1' });
    expect(viaTrpc).toEqual(first.body);
    expect(await stored(t)).toEqual({ memories: 1, jobs: 1 });
    // Without a key, every remember is a new one.
    expect((await send(t, 'notes', body)).status).toBe(202);
    expect(await stored(t)).toEqual({ memories: 2, jobs: 2 });
  });

  it('refuses the key with another text, importance, time or collection (422), and a key with sync=true', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await send(t, 'notes', { content: 'Tea at four.' }, 'k')).status).toBe(202);
    for (const [collection, body] of [
      ['notes', { content: 'Tea at five.' }],
      ['notes', { content: 'Tea at four.', importance: 0.9 }],
      ['notes', { content: 'Tea at four.', observed_at: '2026-01-01T00:00:00Z' }],
      ['other', { content: 'Tea at four.' }],
    ] as const) {
      const res = await send(t, collection, body, 'k');
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/idempotency_key: This Idempotency-Key was used with another body/);
    }
    const sync = await send(t, 'notes', { content: 'Tea at four.' }, 'k2', '?sync=true');
    expect(sync.status).toBe(422);
    expect(sync.body.detail).toMatch(/idempotency_key: An idempotency key names a queued remember/);
    expect((await send(t, 'notes', { content: 'x' }, 'bad key')).status).toBe(422);
    expect((await send(t, 'notes', { content: 'x' }, 'k'.repeat(256))).status).toBe(422);
    expect(await stored(t)).toEqual({ memories: 1, jobs: 1 });
  });

  it('stores once when the same key arrives many times at once', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const answers = await Promise.all(Array.from({ length: 8 }, () => send(t, 'notes', { content: 'The office moved to Porto.' }, 'race')));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(202));
    expect(new Set(answers.map((a) => a.body.job_id)).size).toBe(1);
    expect(await stored(t)).toEqual({ memories: 1, jobs: 1 });
  });

  it("keeps one tenant's keys apart from another's", async () => {
    const [a, b] = [await newTenant(server.url, server.adminKey), await newTenant(server.url, server.adminKey)];
    const first = await send(a, 'notes', { content: 'Same words.' }, 'shared');
    const second = await send(b, 'notes', { content: 'Same words.' }, 'shared');
    expect(second.status).toBe(202);
    expect(second.body.job_id).not.toBe(first.body.job_id);
    expect(await stored(b)).toEqual({ memories: 1, jobs: 1 });
  });
});

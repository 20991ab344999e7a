import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providers, type SyncedProvider } from '../src/schemas/providers/index.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { providerFakes } from './fakes/providers/index.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * Every provider end to end against its fake API over real HTTP, through the REST routes, on the
 * test database (PGlite, or PostgreSQL with TEST_DATABASE_URL). Without a worker, so no scheduled
 * sync runs between the steps (the scheduler has its own test).
 */
type Synced = SyncedProvider;
const PROVIDERS = Object.keys(providerFakes) as Synced[];

let server: TestServer;
const logLines: string[] = [];
const fakes = {} as Record<Synced, ProviderFake>;

beforeAll(async () => {
  for (const p of PROVIDERS) fakes[p] = await providerFakes[p]();
  // Each provider's API variable points at its fake; one on the tenant's own site (confluence) has its fake's URL in the connection's config.
  const urls = Object.fromEntries(
    providers.flatMap((p) => (p.sync.by === 'service' && 'env' in p.sync.api ? [[p.sync.api.env, fakes[p.name as Synced].url]] : [])),
  );
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ...urls }, { worker: false, logLines });
});
afterAll(async () => {
  await server?.close();
  for (const f of Object.values(fakes)) await f.close();
});

async function connect(t: Tenant, provider: Synced, collection: string, extra: Record<string, unknown> = {}) {
  const { credentials, config } = fakes[provider].connection();
  const res = await t.api('POST', '/v1/memory/connections', { provider, collection, credentials, config, name: `${provider} test`, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; status: string };
}

const memoriesOf = async (t: Tenant, collection: string) =>
  (await t.api('GET', `/v1/memory/collections/${collection}/memories?limit=200`)).body as Array<{
    id: string;
    text: string;
    source: string;
    category: string;
    metadata: Record<string, unknown>;
    created_by: { id: string; label: string };
    container_tag: string | null;
    updated_at: string;
    observed_at: string;
    provenance: Record<string, unknown>;
  }>;

describe.each(PROVIDERS)('%s', (provider) => {
  it('first sync stores every record; a later one stores the new and changed ones in place, no duplicate; an idle one stores nothing', async () => {
    const fake = fakes[provider];
    const t = await newTenant(server.url, server.adminKey);
    const collection = `${provider}-sync`;
    const first = [1, 2, 3, 4, 5].map((i) =>
      fake.put({ title: `${provider} title ${i} ${t.id.slice(0, 6)}`, body: `Body of ${provider} record ${i} about tide tables.` }),
    );
    const conn = await connect(t, provider, collection, { container_tag: 'team-a' });
    expect(conn.status).toBe('active');

    const sync1 = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    expect(sync1.status, JSON.stringify(sync1.body)).toBe(200);
    expect(sync1.body).toMatchObject({ status: 'active', last_error: null });
    // Records of earlier tests are in the fake too: at least these five, each once.
    expect(sync1.body.synced).toBeGreaterThanOrEqual(5);
    expect(sync1.body.cursor).toEqual(expect.any(String));
    const stored = await memoriesOf(t, collection);
    expect(stored.length).toBe(sync1.body.synced);
    for (const r of first) {
      const m = stored.find((x) => x.metadata.record_id === r.id || x.text.includes(r.title));
      expect(m, r.title).toBeDefined();
      expect(m!.text).toContain(r.title);
      expect(m!.text).toContain(`record ${r.title.split(' ')[2]} about tide tables`);
      expect(m!).toMatchObject({ source: provider, category: 'connector', container_tag: 'team-a', created_by: { id: conn.id } });
      expect(m!.metadata).toMatchObject({ provider, connection_id: conn.id, updated_at: expect.any(String) });
      // When it happened is the record's own time at the provider (docs/time.md); where from, the connection and record.
      expect(m!.observed_at).toBe(new Date(m!.metadata.updated_at as string).toISOString());
      expect(m!.provenance).toMatchObject({ kind: 'connector', connection_id: conn.id, record_id: m!.metadata.record_id });
    }
    // A record changed at the provider and a new one.
    const changed = fake.put({ id: first[1]!.id, title: first[1]!.title, body: `Changed body of ${provider} record 2: the harbour moved.` });
    const added = fake.put({ title: `${provider} title 6 ${t.id.slice(0, 6)}`, body: `Body of ${provider} record 6 about lighthouses.` });
    const sync2 = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    expect(sync2.body).toMatchObject({ status: 'active', synced: 2 });
    expect(sync2.body.cursor >= sync1.body.cursor).toBe(true);
    const after = await memoriesOf(t, collection);
    expect(after.length).toBe(stored.length + 1);
    const before = stored.find((x) => x.text.includes(first[1]!.title))!;
    const now = after.find((x) => x.id === before.id)!;
    expect(now.text).toContain('the harbour moved');
    expect(after.filter((x) => x.text.includes(changed.title))).toHaveLength(1);
    expect(after.some((x) => x.text.includes(added.title))).toBe(true);

    const idle = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    expect(idle.body).toMatchObject({ status: 'active', synced: 0, cursor: sync2.body.cursor });
    const runs = await t.api('GET', `/v1/memory/connections/${conn.id}/runs`);
    expect(runs.body.map((r: { synced_count: number }) => r.synced_count)).toEqual([0, 2, sync1.body.synced]);
    expect(runs.body.every((r: { status: string }) => r.status === 'success')).toBe(true);
  });

  it("a failed sync sets error with the provider's answer and leaves the cursor", async () => {
    const t = await newTenant(server.url, server.adminKey);
    fakes[provider].put({ title: `${provider} before failure`, body: 'text' });
    const conn = await connect(t, provider, `${provider}-fail`);
    const ok = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    fakes[provider].failNext(401);
    const failed = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: 'error', synced: 0, cursor: ok.body.cursor });
    expect(failed.body.last_error).toContain('401');
    expect(failed.body.last_error).toContain('fake failure 401');
    const got = await t.api('GET', `/v1/memory/connections/${conn.id}`);
    expect(got.body).toMatchObject({ status: 'error', consecutive_failures: 1, last_error: failed.body.last_error });
  });
});

describe('connections', () => {
  it('credentials are checked per provider at create: 422 naming the missing field; unknown provider 422', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const noToken = await t.api('POST', '/v1/memory/connections', { provider: 'slack', collection: 'c', credentials: {}, config: { channel_id: 'C1' } });
    expect(noToken.status).toBe(422);
    expect(noToken.body.errors.map((e: { path: string }) => e.path)).toContain('credentials.token');
    expect(noToken.body.detail).toContain('credentials.token');
    const noChannel = await t.api('POST', '/v1/memory/connections', { provider: 'slack', collection: 'c', credentials: { token: 'x' }, config: {} });
    expect(noChannel.status).toBe(422);
    expect(noChannel.body.errors.map((e: { path: string }) => e.path)).toContain('config.channel_id');
    const confluence = await t.api('POST', '/v1/memory/connections', {
      provider: 'confluence',
      collection: 'c',
      credentials: { email: 'a@b.c' },
      config: { base_url: 'https://x.atlassian.net' },
    });
    expect(confluence.body.errors.map((e: { path: string }) => e.path)).toContain('credentials.api_token');
    const unknown = await t.api('POST', '/v1/memory/connections', { provider: 'dropbox', collection: 'c', credentials: {}, config: {} });
    expect(unknown.status).toBe(422);
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([]);
  });

  it("a wrong token shows at the first sync as error, with the provider's message; another connection is untouched", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const good = await connect(t, 'linear', 'mixed');
    const bad = await t.api('POST', '/v1/memory/connections', {
      provider: 'slack',
      collection: 'mixed',
      credentials: { token: 'xoxb-wrong' },
      config: fakes.slack.connection().config,
    });
    expect(bad.status).toBe(201);
    const failed = await t.api('POST', `/v1/memory/connections/${bad.body.id}/sync`);
    expect(failed.body.status).toBe('error');
    expect(failed.body.last_error).toMatch(/invalid_auth/);
    expect((await t.api('GET', `/v1/memory/connections/${good.id}`)).body).toMatchObject({ status: 'active', last_error: null, consecutive_failures: 0 });
    expect((await t.api('POST', `/v1/memory/connections/${good.id}/sync`)).body.status).toBe('active');
  });

  it('five failures in a row pause it (still listed); a successful manual sync makes it active again', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const conn = await connect(t, 'hubspot', 'pausing');
    const statuses: string[] = [];
    for (let i = 0; i < 5; i++) {
      fakes.hubspot.failNext(401);
      statuses.push((await t.api('POST', `/v1/memory/connections/${conn.id}/sync`)).body.status);
    }
    expect(statuses).toEqual(['error', 'error', 'error', 'error', 'paused']);
    const listed = (await t.api('GET', '/v1/memory/connections')).body;
    expect(listed).toEqual([expect.objectContaining({ id: conn.id, status: 'paused', consecutive_failures: 5 })]);
    const back = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    expect(back.body).toMatchObject({ status: 'active', last_error: null });
    expect((await t.api('GET', `/v1/memory/connections/${conn.id}`)).body.consecutive_failures).toBe(0);
  });

  it('a sync that fails on a later page keeps the pages stored and its cursor; the next one completes without duplicates', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const collection = 'partial';
    for (let i = 0; i < 4; i++) fakes.linear.put({ title: `Partial issue ${i} ${t.id.slice(0, 6)}`, body: 'An issue body.' });
    const conn = await connect(t, 'linear', collection);
    const all = fakes.linear.records.length;
    // The first page answers, the second fails for good (a 4xx is not retried).
    const served = fakes.linear.requests.length;
    const failing = setInterval(() => {
      if (fakes.linear.requests.length === served + 1) {
        fakes.linear.failNext(400);
        clearInterval(failing);
      }
    }, 1);
    const failed = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    clearInterval(failing);
    expect(failed.body.status).toBe('error');
    expect(failed.body.cursor).toBeNull();
    const kept = (await memoriesOf(t, collection)).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(all);
    const done = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    expect(done.body.status).toBe('active');
    expect(await memoriesOf(t, collection)).toHaveLength(all);
    expect((await t.api('GET', `/v1/memory/connections/${conn.id}/runs`)).body.map((r: { status: string }) => r.status)).toEqual(['success', 'error']);
  });

  it('postgres connections are stored, and their sync answers 400 (run by the tenant)', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await t.api('POST', '/v1/memory/connections', {
      provider: 'postgres',
      collection: 'pg',
      credentials: { connection_string: 'postgres://u:p@db/x' },
      config: { table: 'notes' },
    });
    expect(res.status).toBe(201);
    const sync = await t.api('POST', `/v1/memory/connections/${res.body.id}/sync`);
    expect(sync.status).toBe(400);
    expect(sync.body.detail).toMatch(/run by the tenant/);
  });

  it("another tenant's connection is 404 on every route, and is left as it was", async () => {
    const a = await newTenant(server.url, server.adminKey);
    const b = await newTenant(server.url, server.adminKey);
    const conn = await connect(a, 'notion', 'private');
    for (const [method, path] of [
      ['GET', `/v1/memory/connections/${conn.id}`],
      ['GET', `/v1/memory/connections/${conn.id}/runs`],
      ['POST', `/v1/memory/connections/${conn.id}/sync`],
      ['DELETE', `/v1/memory/connections/${conn.id}`],
    ] as const) {
      expect((await b.api(method, path)).status, `${method} ${path}`).toBe(404);
    }
    expect((await b.api('GET', '/v1/memory/connections')).body).toEqual([]);
    expect((await a.api('GET', `/v1/memory/connections/${conn.id}/runs`)).body).toEqual([]);
    expect((await a.api('DELETE', `/v1/memory/connections/${conn.id}`)).status).toBe(204);
    expect((await a.api('GET', `/v1/memory/connections/${conn.id}`)).status).toBe(404);
  });

  it('credentials appear in no response, log line, audit entry or export', async () => {
    // An operator tenant, so it can read its own audit log.
    const t = await newTenant(server.url, server.adminKey, { admin: true });
    const secret = 'api-token-that-must-not-leak-0123';
    const res = await t.api('POST', '/v1/memory/connections', {
      provider: 'confluence',
      collection: 'secrets',
      credentials: { email: 'ana@acme.test', api_token: secret },
      config: fakes.confluence.connection().config,
    });
    expect(res.status).toBe(201);
    const bodies = [
      res,
      await t.api('GET', '/v1/memory/connections'),
      await t.api('GET', `/v1/memory/connections/${res.body.id}`),
      await t.api('POST', `/v1/memory/connections/${res.body.id}/sync`),
      await t.api('GET', `/v1/memory/connections/${res.body.id}/runs`),
      await t.api('GET', '/v1/memory/admin/audit'),
      await call(server.url, 'GET', '/v1/memory/admin/export', { key: t.key }),
    ].map((r) => JSON.stringify(r.body));
    expect(bodies[3]).toContain('"status":"error"');
    expect(JSON.parse(bodies[5]!).map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['connections.create', 'connections.sync']));
    for (const body of bodies) expect(body).not.toContain(secret);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(secret);
    // Sealed at rest, too.
    const [row] = await server.app.db.query<{ credentials: string }>('select credentials from connections where id = $1', [res.body.id]);
    expect(row!.credentials).not.toContain(secret);
    expect(JSON.parse(server.app.secrets.decrypt(row!.credentials))).toMatchObject({ api_token: secret });
  });
});

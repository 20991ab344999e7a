import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recorded } from '../src/services/llm/usage.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The operator's aggregates (aggregates only, never a tenant's content) on a server of their own, so every count is exact:
 * usage, memory health across tenants and the sign-up and pageview analytics.
 */
const SECRET_TEXT = 'the launch code is swordfish-7731';
// USD per million tokens: 1000 prompt tokens cost 0.002, 500 completion tokens 0.004.
const PRICES = JSON.stringify({ 'test-model': { prompt: 2, completion: 8 } });

let server: TestServer;
let a: Tenant;
let b: Tenant;
let plain: Tenant;
const memoryIds: string[] = [];
const bodies: string[] = [];

async function admin(path: string, key = server.adminKey) {
  const res = await call(server.url, 'GET', path, { key });
  bodies.push(JSON.stringify(res.body));
  return res;
}

const usageCall = (model: string, promptTokens: number, completionTokens: number) => Promise.resolve({ model, promptTokens, completionTokens, latencyMs: 5 });
const endpoint = { baseUrl: 'http://127.0.0.1:1/v1', model: 'test-model', apiKey: '' };

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_LLM_PRICES: PRICES });
  a = await newTenant(server.url, server.adminKey);
  b = await newTenant(server.url, server.adminKey);
  plain = await newTenant(server.url, server.adminKey);
  for (const [t, collection, text] of [
    [a, 'notes', SECRET_TEXT],
    [a, 'notes', 'second memory of a'],
    [a, 'other', 'third memory of a'],
    [b, 'notes', 'first memory of b'],
    [b, 'notes', 'second memory of b'],
  ] as const) {
    const res = await t.api('POST', `/v1/memory/collections/${collection}/memories`, { text });
    expect(res.status).toBe(201);
    memoryIds.push(res.body.id);
  }
  // States the health counts tell apart, set directly: [0] stale, [1] pinned and old (not stale),
  // [2] archived, [3] expired, [4] superseded by [3].
  const [m0, m1, m2, m3, m4] = memoryIds;
  const q = (sql: string, params: unknown[]) => server.app.db.query(sql, params);
  await q(`update memories set updated_at = now() - interval '100 days' where id = any($1::uuid[])`, [[m0, m1]]);
  await q('update memories set pinned = true where id = $1', [m1]);
  await q('update memories set archived = true where id = $1', [m2]);
  await q(`update memories set valid_to = now() - interval '1 hour' where id = $1`, [m3]);
  await q('update memories set superseded_by = $1, superseded_at = now() where id = $2', [m3, m4]);
});

afterAll(() => server?.close());

describe('operator endpoints', () => {
  it('refuse a tenant that is not an admin', async () => {
    for (const path of ['/v1/memory/admin/usage', '/v1/memory/admin/memory-health', '/v1/memory/admin/analytics']) {
      const res = await admin(path, plain.key);
      expect(res.status, path).toBe(403);
      expect(res.body.detail).toMatch(/admin/);
    }
  });

  it('memory-health sums the collection health of every tenant', async () => {
    const res = await admin('/v1/memory/admin/memory-health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ stale_days: 90, total: 5, current: 3, archived: 1, stale: 1, expired: 1, supersessions: 1, needs_attention: 3 });
    // The same definitions as each collection's health: the sums agree.
    const parts = await Promise.all([
      a.api('GET', '/v1/memory/collections/notes/health'),
      a.api('GET', '/v1/memory/collections/other/health'),
      b.api('GET', '/v1/memory/collections/notes/health'),
    ]);
    for (const field of ['total', 'current', 'archived', 'stale', 'expired', 'supersessions', 'needs_attention'])
      expect(res.body[field], field).toBe(parts.reduce((sum, p) => sum + p.body[field], 0));
    // stale_days moves the stale count: 0 days makes every unpinned, unarchived memory stale.
    const now = await admin('/v1/memory/admin/memory-health?stale_days=0');
    expect(now.body).toMatchObject({ stale_days: 0, stale: 3, needs_attention: 5 });
    expect((await admin('/v1/memory/admin/memory-health?stale_days=-1')).status).toBe(422);
  });

  it("usage sums tokens and the price table's cost by purpose and model, across tenants or for one", async () => {
    await recorded(server.app, a.id, 'platform', 'extract_facts', endpoint, usageCall('test-model', 1000, 500));
    await recorded(server.app, b.id, 'server', 'extract_facts', endpoint, usageCall('test-model', 1000, 500));
    await recorded(server.app, a.id, 'tenant', 'rerank', endpoint, usageCall('test-model', 500_000, 0));
    const all = await admin('/v1/memory/admin/usage');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      days: 30,
      llm: [
        { purpose: 'extract_facts', model: 'test-model', prompt_tokens: 2000, completion_tokens: 1000, cost_usd: 0.012 },
        { purpose: 'rerank', model: 'test-model', prompt_tokens: 500_000, completion_tokens: 0, cost_usd: 1 },
      ],
      total_cost_usd: 1.012,
    });
    const bytes = (texts: string[]) => texts.reduce((n, t) => n + Buffer.byteLength(t) + 2, 0); // metadata '{}'
    expect(all.body.storage_bytes).toBe(bytes([SECRET_TEXT, 'second memory of a', 'third memory of a', 'first memory of b', 'second memory of b']));

    const ofB = await admin(`/v1/memory/admin/usage?days=1&tenant_id=${b.id}`);
    expect(ofB.body).toEqual({
      days: 1,
      storage_bytes: bytes(['first memory of b', 'second memory of b']),
      llm: [{ purpose: 'extract_facts', model: 'test-model', prompt_tokens: 1000, completion_tokens: 500, cost_usd: 0.006 }],
      total_cost_usd: 0.006,
    });
    // A tenant's own figure is admin/stats' storage_bytes.
    expect(ofB.body.storage_bytes).toBe((await b.api('GET', '/v1/memory/admin/stats')).body.storage_bytes);
    // Calls older than the window are left out.
    await server.app.db.query(`update llm_usage set at = now() - interval '40 days' where purpose = 'rerank'`, []);
    expect((await admin('/v1/memory/admin/usage')).body.total_cost_usd).toBe(0.012);
    expect((await admin('/v1/memory/admin/usage?days=0')).status).toBe(422);
    expect((await admin('/v1/memory/admin/usage?tenant_id=nope')).status).toBe(422);
  });

  it('analytics counts the sign-up funnel and pageviews by day, path and referrer', async () => {
    const signups = ['funnel-one@example.test', 'funnel-two@example.test'];
    for (const email of signups) expect((await call(server.url, 'POST', '/v1/memory/signup', { body: { email } })).status).toBe(202);
    // The first sign-up's link is opened; the second's is not.
    const mail = await until('the sign-up mail', async () => {
      const [row] = await server.app.db.query<{ body: string }>('select body from mail_outbox where recipient = $1', [signups[0]]);
      return row?.body;
    });
    const reveal = /(\/v1\/memory\/reveal\/[A-Za-z0-9_-]{43})/.exec(mail)![1]!;
    expect((await call(server.url, 'GET', reveal)).status).toBe(200);
    const views: Array<[string, string | null]> = [
      ['/', 'https://news.example.test/'],
      ['/', 'https://news.example.test/'],
      ['/', null],
      ['/pricing', 'https://search.example.test/'],
      ['/status', null],
    ];
    for (const [path, referrer] of views) expect((await call(server.url, 'POST', '/v1/pulse', { body: { path, referrer } })).status).toBe(204);
    // One view from before the window.
    await server.app.db.query(`insert into pageviews (at, path, referrer) values (now() - interval '30 days', '/old', null)`, []);

    const res = await admin('/v1/memory/admin/analytics');
    expect(res.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    // Tenants: the operator's own, three made by the operator, two by sign-up.
    expect(res.body.funnel).toEqual({ pageviews: 5, signups_requested: 2, keys_revealed: 1, tenants_created: 6 });
    expect(res.body.days).toBe(7);
    expect(res.body.signups_by_day).toHaveLength(7);
    expect(res.body.signups_by_day.at(-1)).toEqual({ day: today, signups: 2 });
    expect(res.body.signups_by_day.slice(0, -1).every((d: { signups: number }) => d.signups === 0)).toBe(true);
    expect(res.body.pageviews_by_day).toHaveLength(7);
    expect(res.body.pageviews_by_day.at(-1)).toEqual({ day: today, views: 5 });
    expect(res.body.top_paths).toEqual([
      { path: '/', views: 3 },
      { path: '/pricing', views: 1 },
      { path: '/status', views: 1 },
    ]);
    expect(res.body.top_referrers).toEqual([
      { referrer: null, views: 2 },
      { referrer: 'https://news.example.test/', views: 2 },
      { referrer: 'https://search.example.test/', views: 1 },
    ]);
    const month = await admin('/v1/memory/admin/analytics?days=31');
    expect(month.body.funnel.pageviews).toBe(6);
    expect(month.body.pageviews_by_day).toHaveLength(31);
    expect((await admin('/v1/memory/admin/analytics?days=0')).status).toBe(422);
  });

  it('answer no tenant content: no memory text, no email address, no tenant name', () => {
    const all = bodies.join('\n');
    expect(bodies.length).toBeGreaterThan(10);
    for (const text of [SECRET_TEXT, 'swordfish', 'memory of', a.name, b.name, 'funnel-one', '@']) expect(all).not.toContain(text);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIERS, loadConfig } from '../src/core/config.ts';
import { hashKey } from '../src/services/access/keys.ts';
import { rateLimitStoreFailures } from '../src/services/access/rate-limit.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

// Free tier at 3 requests per window, its other limits the built-in ones. The window is an hour so
// that a test never straddles a window boundary; the reset is tested by moving the stored window
// into the past.
const TIERS = JSON.stringify({ free: { rate_limit_per_minute: 3 }, pro: { rate_limit_per_minute: 10 } });

const mcpInit = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

describe('per-key rate limit', () => {
  let server: TestServer;
  let t: Tenant;

  beforeAll(async () => {
    server = await startServer(
      { ORGMEM_TIERS: TIERS, ORGMEM_RATE_LIMIT_WINDOW_SECONDS: '3600', ORGMEM_PULSE_PER_IP: '5', ORGMEM_PULSE_WINDOW_SECONDS: '3600', ORGMEM_EMBEDDER: 'hash' },
      { worker: false },
    );
  });
  afterAll(() => server?.close());

  const keyBucket = async (key: string) => {
    const [row] = await server.app.db.query<{ id: string }>('select id from api_keys where key_hash = $1', [hashKey(key)]);
    return `key:${row!.id}`;
  };

  it('counts every authenticated request, with RateLimit headers, then answers 429 with Retry-After', async () => {
    t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const now = Math.floor(Date.now() / 1000);
    const seen: Array<[number, string | null]> = [];
    let reset = '';
    for (const path of ['/v1/memory/collections', '/v1/memory/collections/missing', '/v1/memory/admin/me']) {
      const res = await t.api('GET', path);
      seen.push([res.status, res.headers.get('ratelimit-remaining')]);
      expect(res.headers.get('ratelimit-limit')).toBe('3');
      reset = res.headers.get('ratelimit-reset')!;
    }
    // A 404 is an authenticated answer too: it counts and carries the headers.
    expect(seen).toEqual([
      [200, '2'],
      [404, '1'],
      [200, '0'],
    ]);
    expect(Number(reset)).toBeGreaterThan(now);
    expect(Number(reset)).toBeLessThanOrEqual(now + 3600 + 1);

    const over = await t.api('GET', '/v1/memory/collections');
    expect(over.status).toBe(429);
    expect(over.body.detail).toMatch(/rate limit/i);
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(over.headers.get('ratelimit-reset')).toBe(reset);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Number(reset) - now + 1);

    // Every front end is limited alike.
    const trpc = await call(server.url, 'GET', '/trpc/collections.list', { key: t.key });
    expect(trpc.status).toBe(429);
    expect(trpc.headers.get('retry-after')).toBeTruthy();
    const mcp = await call(server.url, 'POST', '/v1/mcp', { key: t.key, body: mcpInit, headers: { accept: 'application/json, text/event-stream' } });
    expect(mcp.status).toBe(429);
    expect(mcp.headers.get('retry-after')).toBeTruthy();
  });

  it('starts over in a new window', async () => {
    t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    for (let i = 0; i < 3; i++) expect((await t.api('GET', '/v1/memory/collections')).status).toBe(200);
    expect((await t.api('GET', '/v1/memory/collections')).status).toBe(429);
    await server.app.db.query(`update rate_limits set window_start = window_start - interval '1 hour' where bucket = $1`, [await keyBucket(t.key)]);
    const again = await t.api('GET', '/v1/memory/collections');
    expect(again.status).toBe(200);
    expect(again.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('is per key, carries headers over tRPC and MCP, and none on 401', async () => {
    const admin = (path: string, body: unknown) => call(server.url, 'POST', path, { key: server.adminKey, body });
    const created = await admin('/v1/memory/admin/tenants', { name: 'perkey', email: `perkey-${Date.now()}@test.local`, tier: 'free' });
    const first = created.body.api_key as string;
    const second = (await call(server.url, 'POST', '/v1/memory/keys', { key: first, body: { label: 'second' } })).body.api_key as string;
    expect((await call(server.url, 'GET', '/v1/memory/agents', { key: first })).headers.get('ratelimit-remaining')).toBe('1');
    const trpc = await call(server.url, 'GET', '/trpc/agents.list', { key: second });
    expect(trpc.status).toBe(200);
    expect([trpc.headers.get('ratelimit-limit'), trpc.headers.get('ratelimit-remaining')]).toEqual(['3', '2']);
    const mcp = await call(server.url, 'POST', '/v1/mcp', { key: second, body: mcpInit, headers: { accept: 'application/json, text/event-stream' } });
    expect(mcp.status).toBe(200);
    expect(mcp.headers.get('ratelimit-remaining')).toBe('1');
    const unauthenticated = await call(server.url, 'GET', '/v1/memory/agents', { key: 'mv_unknown' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('ratelimit-limit')).toBeNull();
  });

  it('takes from ORGMEM_TIERS the fields it names of a built-in tier, the others built in', async () => {
    const fresh = await newTenant(server.url, server.adminKey, { tier: 'free' });
    expect((await fresh.api('GET', '/v1/memory/admin/me')).body.limits).toEqual({ ...DEFAULT_TIERS.free, rate_limit_per_minute: 3 });
  });

  it('gives the pageview beacon a budget per client address: past it 429 with Retry-After, and nothing stored', async () => {
    const views = async () => (await server.app.platform.query<{ n: number }>('select count(*)::int as n from pageviews'))[0]!.n;
    const before = await views();
    // The beacon and its alias share the budget of 5.
    const paths = ['/v1/pulse', '/v1/track', '/v1/pulse', '/v1/track', '/v1/pulse', '/v1/pulse', '/v1/track'];
    const answers = [];
    for (const path of paths) answers.push(await call(server.url, 'POST', path, { body: { path: '/pricing' } }));
    expect(answers.map((a) => a.status)).toEqual([204, 204, 204, 204, 204, 429, 429]);
    const over = answers[5]!;
    expect(over.body.detail).toMatch(/^Rate limit of 5 calls per window exceeded for this client address; retry in \d+ s$/);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await views()).toBe(before + 5);
  });

  describe('a batch of 100 calls against a budget of 10', () => {
    const stored = async (tenantId: string) =>
      (await server.app.db.query<{ n: number }>('select count(*)::int as n from memories where tenant_id = $1', [tenantId]))[0]!.n;
    const tenMemories = Array.from({ length: 100 }, (_, i) => ({ collection: 'batch', text: `memory number ${i}` }));

    it('over MCP: runs the first 10 JSON-RPC calls and answers each of the other 90 with a rate-limit error', async () => {
      const m = await newTenant(server.url, server.adminKey, { tier: 'pro' });
      const batch = tenMemories.map((args, id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'store_memory', arguments: args } }));
      const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };
      const res = await call(server.url, 'POST', '/v1/mcp', { key: m.key, body: batch, headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe('0');
      const answers = res.body as Array<{ id: number; result?: { isError?: boolean }; error?: { code: number; message: string; data: unknown } }>;
      expect(answers).toHaveLength(100);
      const ran = answers.filter((a) => a.result && !a.result.isError).map((a) => a.id);
      expect(ran.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const refused = answers.filter((a) => a.error);
      expect(refused).toHaveLength(90);
      for (const { error } of refused) {
        expect(error).toEqual({
          code: -32029,
          message: expect.stringMatching(/^Rate limit of 10 calls per window exceeded/),
          data: { status: 429, detail: error!.message },
        });
      }
      expect(await stored(m.id)).toBe(10);
      // The window is spent: the next request is refused whole.
      expect((await call(server.url, 'POST', '/v1/mcp', { key: m.key, body: batch.slice(0, 1), headers })).status).toBe(429);
    });

    it('over tRPC: runs 10 of the calls and answers each of the other 90 with TOO_MANY_REQUESTS', async () => {
      const m = await newTenant(server.url, server.adminKey, { tier: 'pro' });
      const path = `/trpc/${tenMemories.map(() => 'memories.create').join(',')}?batch=1`;
      const res = await call(server.url, 'POST', path, { key: m.key, body: Object.fromEntries(tenMemories.map((input, i) => [i, input])) });
      const answers = res.body as Array<{ result?: unknown; error?: { message: string; data: { code: string; httpStatus: number; detail: string } } }>;
      expect(answers).toHaveLength(100);
      expect(answers.filter((a) => a.result)).toHaveLength(10);
      const refused = answers.filter((a) => a.error);
      expect(refused).toHaveLength(90);
      for (const { error } of refused) {
        expect(error!.data).toMatchObject({ code: 'TOO_MANY_REQUESTS', httpStatus: 429, detail: error!.message });
      }
      expect(await stored(m.id)).toBe(10);
    });
  });

  it('fails open when its table is unavailable, and counts the failure', async () => {
    t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const before = rateLimitStoreFailures();
    await server.app.db.query('alter table rate_limits rename to rate_limits_away');
    try {
      for (let i = 0; i < 5; i++) {
        const res = await t.api('GET', '/v1/memory/collections');
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBeNull();
      }
      expect(rateLimitStoreFailures() - before).toBe(5);
    } finally {
      await server.app.db.query('alter table rate_limits_away rename to rate_limits');
    }
    const back = await t.api('GET', '/v1/memory/collections');
    expect(back.headers.get('ratelimit-remaining')).toBe('2');
  });
});

describe('rate limit switched off', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_TIERS: TIERS, ORGMEM_RATE_LIMIT: '0', ORGMEM_EMBEDDER: 'hash' }, { worker: false });
  });
  afterAll(() => server?.close());

  it('neither counts nor sends headers', async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    for (let i = 0; i < 5; i++) {
      const res = await t.api('GET', '/v1/memory/collections');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    }
    expect(await server.app.db.query('select * from rate_limits')).toEqual([]);
  });
});

describe('ORGMEM_TIERS', () => {
  const tiers = (json: string) => () => loadConfig({ ORGMEM_TIERS: json }).tiers;

  it('merges a built-in tier field by field and adds a tier that gives every field', () => {
    const team = { rate_limit_per_minute: 300, max_memories: 50_000, max_collections: 500, max_storage_bytes: null };
    expect(tiers(JSON.stringify({ pro: { max_memories: null }, team }))()).toEqual({
      ...DEFAULT_TIERS,
      pro: { ...DEFAULT_TIERS.pro, max_memories: null },
      team,
    });
  });

  it('stops the start naming what is wrong: a new tier without every field, a field it does not know, a bad value, not JSON', () => {
    expect(tiers('{"team": {"rate_limit_per_minute": 10}}')).toThrow(
      'Invalid configuration:\n  ORGMEM_TIERS: "team" is a new tier and gives no max_memories, max_collections, max_storage_bytes; a new tier gives every field',
    );
    expect(tiers('{"free": {"rate_limit_per_min": 10}}')).toThrow(/ORGMEM_TIERS: free: Unrecognized key: "rate_limit_per_min"/);
    expect(tiers('{"free": {"rate_limit_per_minute": 0}}')).toThrow(/ORGMEM_TIERS: free\.rate_limit_per_minute: Too small/);
    expect(tiers('{"free": 10}')).toThrow(/ORGMEM_TIERS: expected an object of tiers/);
    expect(tiers('free=10')).toThrow(/ORGMEM_TIERS: not JSON/);
  });
});

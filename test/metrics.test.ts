import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../src/ports/metrics.ts';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { col, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * The operator's metrics (GET /v1/memory/admin/metrics and its Prometheus twin) on a server of their
 * own, so every count is exact: the JSON window with its reset, and the Prometheus text.
 */
const COLLECTION = 'zebra-ledger-private';
const SECRET_TEXT = 'the vault combination is marigold-4417';
const QUERY = 'vault combination';

let fake: FakeLlm;
let server: TestServer;
let t: Tenant;
const ids: string[] = [];
const bodies: string[] = [];

async function metrics(reset = false, key = server.adminKey) {
  const res = await call(server.url, 'GET', `/v1/memory/admin/metrics${reset ? '?reset=true' : ''}`, { key });
  bodies.push(JSON.stringify(res.body));
  return res;
}

async function prometheus(key = server.adminKey) {
  const res = await fetch(`${server.url}/v1/memory/admin/metrics/prometheus`, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, contentType: res.headers.get('content-type'), text };
}

const route = (body: any, name: string) => body.routes.find((r: any) => r.route === name);

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake);
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
  t = await newTenant(server.url, server.adminKey);
});

afterAll(async () => {
  await server?.close();
  await fake?.close();
});

describe('operator metrics', () => {
  it('refuses a tenant that is not an operator', async () => {
    expect((await metrics(false, t.key)).status).toBe(403);
    expect((await prometheus(t.key)).status).toBe(403);
  });

  it('counts each procedure by its path template, 4xx included, whatever the front end', async () => {
    await metrics(true);
    const created = await t.api('POST', `${col(COLLECTION)}/memories`, { text: SECRET_TEXT });
    expect(created.status).toBe(201);
    ids.push(created.body.id);
    expect((await t.api('GET', `${col(COLLECTION)}/memories/${created.body.id}`)).status).toBe(200);
    expect((await t.api('GET', `${col(COLLECTION)}/memories/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await t.api('POST', `${col(COLLECTION)}/memories`, { text: '' })).status).toBe(422);
    // tRPC goes through the same pipeline and counts under the procedure's route.
    const trpc = await call(server.url, 'GET', '/trpc/collections.list', { key: t.key });
    expect(trpc.status).toBe(200);

    const res = await metrics();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['citus_nodes', 'counters', 'routes', 'stages', 'window_started_at']);
    // Not a Citus coordinator: no nodes (test/citus.test.ts lists them on one).
    expect(res.body.citus_nodes).toEqual([]);
    expect(route(res.body, 'POST /v1/memory/collections/{collection}/memories')).toMatchObject({ count: 2, status_4xx: 1, status_5xx: 0 });
    expect(route(res.body, 'GET /v1/memory/collections/{collection}/memories/{id}')).toMatchObject({ count: 2, status_4xx: 1, status_5xx: 0 });
    expect(route(res.body, 'GET /v1/memory/collections')).toMatchObject({ count: 1, status_4xx: 0 });
    for (const r of res.body.routes) {
      expect(Object.keys(r).sort()).toEqual(['avg_ms', 'count', 'p50_ms', 'p95_ms', 'route', 'status_4xx', 'status_5xx']);
      expect(r.route).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \/v1\/[a-z0-9/_{}-]+$/);
      expect(r.p50_ms).toBeGreaterThan(0);
      expect(r.p95_ms).toBeGreaterThanOrEqual(r.p50_ms);
    }
    // The memory create embedded its text once.
    expect(res.body.stages.embed.count).toBe(1);
  });

  it('times embed, cache_get and search, and counts the second search as a cache hit', async () => {
    await metrics(true);
    const first = await t.api('POST', `${col(COLLECTION)}/search`, { query: QUERY });
    const second = await t.api('POST', `${col(COLLECTION)}/search`, { query: QUERY });
    expect([first.status, first.body.cached, second.status, second.body.cached]).toEqual([200, false, 200, true]);
    const { stages, counters } = (await metrics()).body;
    expect(stages.embed.count).toBe(1);
    expect(stages.search.count).toBe(1);
    expect(stages.cache_get.count).toBe(2);
    expect(counters).toEqual({ search_cache_hit: 1, search_cache_miss: 1, parse_runner_killed: 0 });
    expect(stages.llm_extract).toEqual({ count: 0, avg_ms: 0, p50_ms: 0, p95_ms: 0 });
    for (const s of ['embed', 'search', 'cache_get']) expect(Object.keys(stages[s]).sort()).toEqual(['avg_ms', 'count', 'p50_ms', 'p95_ms']);
  });

  it('times the LLM extraction of a remember', async () => {
    await metrics(true);
    const res = await rememberSync(t, COLLECTION, 'Ana lives in Lisbon. Ana likes green tea.');
    expect(res.status).toBe(200);
    ids.push(...res.body.memories.map((m: any) => m.id));
    const { stages, routes } = (await metrics()).body;
    expect(stages.llm_extract.count).toBe(1);
    expect(stages.llm_extract.avg_ms).toBeGreaterThan(0);
    expect(stages.embed.count).toBeGreaterThanOrEqual(1);
    expect(routes.map((r: any) => r.route)).toContain('POST /v1/memory/collections/{collection}/remember');
  });

  it('reset clears the window after reading it', async () => {
    await t.api('GET', `${col(COLLECTION)}/memories`);
    const before = (await metrics(true)).body;
    expect(route(before, 'GET /v1/memory/collections/{collection}/memories')).toMatchObject({ count: 1 });
    const after = (await metrics()).body;
    // Only the resetting read itself, which landed in the new window.
    expect(after.routes).toEqual([expect.objectContaining({ route: 'GET /v1/memory/admin/metrics', count: 1, status_4xx: 0 })]);
    expect(Object.values(after.stages).map((s: any) => s.count)).toEqual([0, 0, 0, 0]);
    expect(after.counters).toEqual({ search_cache_hit: 0, search_cache_miss: 0, parse_runner_killed: 0 });
    expect(Date.parse(after.window_started_at)).toBeGreaterThanOrEqual(Date.parse(before.window_started_at));
  });

  it('answers Prometheus text with the histograms, the cache counters and the process metrics', async () => {
    const res = await prometheus();
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const { types, samples } = parsePrometheus(res.text);
    expect(types.get('orgmem_request_duration_seconds')).toBe('histogram');
    expect(types.get('orgmem_stage_duration_seconds')).toBe('histogram');
    expect(types.get('orgmem_search_cache_hits_total')).toBe('counter');
    // Not a Citus coordinator: no node gauge.
    expect(types.has('orgmem_citus_node_up')).toBe(false);
    const value = (name: string, labels: Record<string, string> = {}) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    // Cumulative: the JSON window's reset does not touch it.
    const created = { method: 'POST', route: '/v1/memory/collections/{collection}/memories' };
    expect(value('orgmem_request_duration_seconds_count', { ...created, status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(value('orgmem_request_duration_seconds_count', { ...created, status_class: '4xx' })).toBe(1);
    expect(value('orgmem_request_duration_seconds_bucket', { ...created, status_class: '4xx', le: '+Inf' })).toBe(1);
    expect(value('orgmem_stage_duration_seconds_count', { stage: 'embed' })).toBeGreaterThanOrEqual(2);
    expect(value('orgmem_stage_duration_seconds_count', { stage: 'llm_extract' })).toBe(1);
    expect(value('orgmem_search_cache_hits_total')).toBe(1);
    expect(value('orgmem_search_cache_misses_total')).toBe(1);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(value(name), name).toBeGreaterThanOrEqual(0);
    }
  });

  it('holds no tenant content in any body', () => {
    expect(bodies.length).toBeGreaterThan(8);
    const all = bodies.join('\n');
    for (const secret of [COLLECTION, SECRET_TEXT, QUERY, 'Lisbon', 'green tea', t.id, t.name, t.key, ...ids]) expect(all).not.toContain(secret);
  });
});

describe('the recorder', () => {
  it('reads percentiles from its buckets within 5%', () => {
    const m = createMetrics(true);
    for (let i = 1; i <= 1000; i++) m.stage('search', i);
    const { search } = m.read(false).stages;
    expect(search.count).toBe(1000);
    expect(search.avg_ms).toBe(500.5);
    expect(Math.abs(search.p50_ms - 500) / 500).toBeLessThan(0.05);
    expect(Math.abs(search.p95_ms - 950) / 950).toBeLessThan(0.05);
    m.stage('embed', 3.25);
    expect(m.read(true).stages.embed).toEqual({ count: 1, avg_ms: 3.25, p50_ms: 3.25, p95_ms: 3.25 });
    expect(m.read(false).stages.search.count).toBe(0);
  });

  it('records nothing when switched off (ORGMEM_METRICS=0)', async () => {
    const m = createMetrics(false);
    m.request({ method: 'GET', path: '/v1/memory/health' }, 200, 1);
    m.stage('embed', 1);
    m.count('search_cache_hit');
    expect(m.read(false)).toMatchObject({
      routes: [],
      counters: { search_cache_hit: 0, search_cache_miss: 0, parse_runner_killed: 0 },
      stages: { embed: { count: 0 } },
    });
    expect(await m.prometheus()).toBe('');
  });
});

/**
 * Prometheus text format 0.0.4: `# HELP`/`# TYPE` comments, and sample lines
 * `name{label="value",...} value [timestamp]` (labels optional; label values escape \\, \" and \n).
 */
function parsePrometheus(text: string) {
  const types = new Map<string, string>();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line.startsWith('#')) {
      expect(line).toMatch(/^# (HELP|TYPE) /);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (\S+)( -?\d+)?$/.exec(line);
    expect(m, line).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const [, k, v] of m![2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? [])
      labels[k!] = v!.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    // Go's ParseFloat, which Prometheus uses, takes NaN in any case (prom-client writes `Nan`).
    const raw = m![3]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : /^nan$/i.test(raw) ? NaN : Number(raw);
    expect(Number.isNaN(value) && !/^nan$/i.test(raw), line).toBe(false);
    samples.push({ name: m![1]!, labels, value });
  }
  return { types, samples };
}

/**
 * The curve: one PostgreSQL database grown through several sizes (by default 100k, 1M, 3M and 5M
 * memories) over 1,000 tenants, hash embedder, measured at each size. Run in steps: each run
 * resumes the kept database from the memories it holds, loads up to the next size and measures
 * there; stop it at any time and run it again.
 *
 *   node --import tsx bench/search/curve.ts [--db orgmem_curve] [--points 100000,1000000,3000000,5000000]
 *                                           [--stop-after N] [--samples 100]
 *
 * Tenants: one large tenant holds a tenth of every size, the 999 others share the rest, a call
 * each in turn (so at 100k, 900 of them hold 100 memories; 100 memories a bulk call, 4 calls in
 * flight, each call to one tenant's collection "main";
 * the tenants' keys are kept in bench/results/curve-<db>.state.json). At each size:
 * - the load's rate since the previous size (of a resumed step, the part this run loaded) and
 *   its CPU per memory (the server's, and this database's PostgreSQL backends');
 * - hybrid, vector and text search on the large tenant at concurrency 1 and 8 (`search_ms` and
 *   HTTP p50/p95), filtered hybrid (container_tag 0.1%, category + metadata) at concurrency 1,
 *   and hybrid at concurrency 1 in small tenants (a different tenant each query);
 * - the memories table's size and each of its indexes', and the resident memory of the server
 *   (after the searches) and of PostgreSQL's backends for this database;
 * - the service's `search_ms` against the bare SQL of the same statements (bench/search/bare.ts,
 *   hybrid, on the large tenant), with the server stopped.
 * As bench/search/run.ts does, the load runs with the server's worker (its statistics job), then
 * `VACUUM` and a restart before measuring. Results: bench/results/curve-<db>.json.
 *
 * With `--base` on a Citus coordinator the database is made a database of its cluster
 * (bench/lib/server.ts) and the same run measures orgmem on Citus: the backends' CPU and
 * resident memory then sum the coordinator's and every worker's for this database, and the
 * sizes are the shards' (citus_relation_size, without the per-index list).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { backendCpuSeconds, backendCpuSince, backendPids, processCpuSeconds } from '../lib/cpu.ts';
import { api, citusWorkers, createDatabase, createTenantKey, startOrgmem, type RunningServer } from '../lib/server.ts';
import { pool, round, summary } from '../lib/stats.ts';
import { memories, queries } from './corpus.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'orgmem_curve' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    points: { type: 'string', default: '100000,1000000,3000000,5000000' },
    // Stop once this size is measured (a step of a longer run).
    'stop-after': { type: 'string' },
    tenants: { type: 'string', default: '1000' },
    samples: { type: 'string', default: '100' },
    port: { type: 'string', default: '18932' },
    'load-concurrency': { type: 'string', default: '4' },
  },
});
const DB = args.db!;
const TENANTS = Number(args.tenants);
const SAMPLES = Number(args.samples);
const BATCH = 100;
const LARGE_SHARE = 10; // every tenth call goes to the large tenant
const STATE = `bench/results/curve-${DB}.state.json`;
const RESULTS = `bench/results/curve-${DB}.json`;

const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const residentMb = (pid: number) => {
  try {
    return round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);
  } catch {
    return 0;
  }
};

interface State {
  keys: string[]; // keys[0]: the large tenant
  points: Array<Record<string, unknown>>;
}

const dbUrl = await createDatabase(args.base!, DB, false);
const env = { DATABASE_URL: dbUrl, ORGMEM_EMBEDDER: 'hash', ORGMEM_DB_POOL: '10', ORGMEM_RATE_LIMIT: 'false', ORGMEM_AUTO_ANALYZE: '1' };
const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
const workers = await citusWorkers(dbUrl);
/** Where this database's backends run: the server, or a Citus cluster's coordinator and workers. */
const nodes = [sql, ...(workers ?? []).map((w) => postgres(w, { max: 1, onnotice: () => {} }))];
mkdirSync('bench/results', { recursive: true });
const state: State = existsSync(STATE) ? JSON.parse(readFileSync(STATE, 'utf8')) : { keys: [], points: [] };
const save = () => {
  writeFileSync(STATE, JSON.stringify(state, null, 2));
  writeFileSync(RESULTS, JSON.stringify({ database: DB, tenants: TENANTS, points: state.points }, null, 2));
};

let server = await startOrgmem(env, Number(args.port), { worker: true });
try {
  if (state.keys.length < TENANTS) await createTenants();
  const stopAfter = Number(args['stop-after'] ?? Infinity);
  for (const size of args.points!.split(',').map(Number)) {
    if (state.points.some((p) => p.memories_target === size)) continue;
    const loaded = await loadTo(size);
    server = await restartMeasured(server);
    const point: Record<string, unknown> = {
      memories_target: size,
      at: new Date().toISOString(),
      load_average: loadAverage(),
      insert: loaded,
      ...(await measure(server, size)),
    };
    await server.stop();
    point.bare_sql = bareRatio();
    state.points.push(point);
    save();
    log(`point ${size}: ${JSON.stringify(point)}`);
    if (size >= stopAfter) break;
    server = await startOrgmem(env, Number(args.port), { worker: true });
  }
} finally {
  await server.stop();
  for (const node of nodes) await node.end();
}
log(`wrote ${RESULTS}`);

/** The tenants, through the operator's endpoint (one CLI call, for the operator's own key). */
async function createTenants() {
  const admin = createTenantKey(env, 'curve-admin', 'enterprise', true);
  log(`creating ${TENANTS - state.keys.length} tenants`);
  while (state.keys.length < TENANTS) {
    const i = state.keys.length;
    const res = await api(server.url, admin, 'POST', '/v1/memory/admin/tenants', {
      name: `curve-${i}`,
      email: `curve-${i}-${Date.now()}@bench.local`,
      tier: 'enterprise',
    });
    if (res.status !== 201) throw new Error(`create tenant: ${res.status} ${JSON.stringify(res.body)}`);
    state.keys.push(res.body.api_key);
  }
  save();
}

/** The tenant of the bulk call number `b`: every tenth the large one, the others in turn. */
function tenantOf(b: number) {
  return b % LARGE_SHARE === 0 ? 0 : 1 + (smallCalls(b) % (TENANTS - 1));
}

/** How many of the first `n` bulk calls went to small tenants. */
function smallCalls(n: number) {
  return n - Math.ceil(n / LARGE_SHARE);
}

/** Loads from the memories the database holds up to `size`; the calls are numbered, so a resumed load goes on where it stopped. */
async function loadTo(size: number) {
  const count = async () => (await sql`select count(*)::int as n from memories`)[0]!.n as number;
  const first = Math.floor((await count()) / BATCH);
  const calls = Array.from({ length: Math.max(0, Math.ceil(size / BATCH) - first) }, (_, i) => first + i);
  log(`loading ${calls.length * BATCH} memories (${first * BATCH} held) up to ${size}`);
  const started = performance.now();
  const cpu = { server: processCpuSeconds(server.pid), backends: await backendCpuSeconds(nodes) };
  let lastReport = started;
  await pool(calls, Number(args['load-concurrency']), async (b, i) => {
    const items = [...memories(BATCH, 1_000_000 + b)];
    const res = await api(server.url, state.keys[tenantOf(b)]!, 'POST', '/v1/memory/collections/main/memories/bulk', items);
    if (res.status !== 201) throw new Error(`bulk insert: ${res.status} ${JSON.stringify(res.body)}`);
    if (performance.now() - lastReport > 60_000) {
      lastReport = performance.now();
      log(`${(first + i) * BATCH} held (${Math.round((i * BATCH) / ((lastReport - started) / 1000))}/s), load average ${loadAverage()}`);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  const memoriesLoaded = calls.length * BATCH;
  return {
    memories: memoriesLoaded,
    seconds: round(seconds),
    per_second: Math.round(memoriesLoaded / seconds),
    cpu_ms_per_memory: memoriesLoaded && {
      server: round(((processCpuSeconds(server.pid) - cpu.server) * 1000) / memoriesLoaded, 3),
      postgres: round((backendCpuSince(cpu.backends, await backendCpuSeconds(nodes)) * 1000) / memoriesLoaded, 3),
    },
    load_average_after: loadAverage(),
  };
}

/**
 * The statistics job and the vector graph's fills the load queued (a tenant reaching
 * ORGMEM_GRAPH_FROM), then the visibility map and a restart without the worker: as after a deploy.
 */
async function restartMeasured(running: RunningServer) {
  const since = performance.now();
  const pending = async () =>
    (
      await sql`select ((select count(*) from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
                          where j.key = 'analyze_tables' or (t.identifier = 'graph_fill' and j.attempts < j.max_attempts))
                       + (select count(*) from graph_tenants where state <> 'ready' and error is null))::int as n`
    )[0]!.n as number;
  while ((await pending()) > 0 && performance.now() - since < 300_000) await new Promise((r) => setTimeout(r, 500));
  await running.stop();
  log('vacuum');
  // ANALYZE too: the partial vector index's size, which the cost model reads, is counted by it.
  await sql`vacuum (analyze) memories`;
  return startOrgmem(env, Number(args.port));
}

async function measure(s: RunningServer, size: number) {
  const C = '/v1/memory/collections/main/search';
  const search = async (key: string, body: Record<string, unknown>) => {
    const t0 = performance.now();
    const res = await api(s.url, key, 'POST', C, { limit: 10, min_score: 0, ...body });
    if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body)}`);
    return { search_ms: res.body.search_ms as number, http_ms: performance.now() - t0 };
  };
  const run = async (name: string, concurrency: number, body: Record<string, unknown>, keyOf: (i: number) => string = () => state.keys[0]!) => {
    const qs = queries(SAMPLES, 7 + concurrency);
    const searchMs: number[] = [];
    const httpMs: number[] = [];
    const started = performance.now();
    await pool(qs, concurrency, async (query, i) => {
      const r = await search(keyOf(i), { query, ...body });
      searchMs.push(r.search_ms);
      httpMs.push(r.http_ms);
    });
    const row = {
      scenario: name,
      concurrency,
      search_ms: summary(searchMs),
      http_ms: summary(httpMs),
      qps: round(qs.length / ((performance.now() - started) / 1000)),
    };
    log(JSON.stringify(row));
    return row;
  };
  await pool(queries(50, 99), 4, async (query) => void (await search(state.keys[0]!, { query, mode: 'hybrid' })));
  const rows = [];
  for (const mode of ['hybrid', 'vector', 'text']) for (const c of [1, 8]) rows.push(await run(mode, c, { mode }));
  rows.push(await run('hybrid + container_tag (0.1%)', 1, { mode: 'hybrid', container_tag: 'user-7' }));
  rows.push(
    await run('hybrid + category + metadata (~0.2%)', 1, { mode: 'hybrid', category: 'preference', metadata_filter: { project: 'p-3', source: 'crm' } }),
  );
  // The small tenants that hold memories (at 100k, 900 of the 999: one call each).
  const filled = Math.min(TENANTS - 1, smallCalls(Math.ceil(size / BATCH)));
  rows.push(await run('hybrid, small tenants', 1, { mode: 'hybrid' }, (i) => state.keys[1 + ((i * 37) % filled)]!));
  const [sizes] = workers
    ? await sql`select (select count(*) from memories)::int as rows, citus_relation_size('memories')::float8 as heap_bytes,
                       citus_total_relation_size('memories')::float8 as total_bytes,
                       (citus_total_relation_size('memories') - citus_table_size('memories'))::float8 as index_bytes`
    : await sql`select (select count(*) from memories)::int as rows, pg_relation_size('memories')::float8 as heap_bytes,
                       pg_total_relation_size('memories')::float8 as total_bytes, pg_indexes_size('memories')::float8 as index_bytes,
                       pg_database_size(current_database())::float8 as database_bytes`;
  const indexes = workers
    ? []
    : await sql`select indexrelname as index, pg_relation_size(indexrelid)::float8 as bytes
                  from pg_stat_user_indexes where relname = 'memories' order by bytes desc`;
  const [{ large }] = await sql<[{ large: number }]>`select max(memory_count)::int as large from collections`;
  return {
    large_tenant_memories: large,
    sizes: { ...sizes, bytes_per_memory: round(sizes!.total_bytes / sizes!.rows) },
    indexes,
    resident_mb: { server: residentMb(s.pid), postgres_backends: round((await backendPids(nodes)).reduce((n, pid) => n + residentMb(pid), 0)) },
    search: rows,
  };
}

/** bench/search/bare.ts on the large tenant's collection (its key in /tmp/<db>.key, where bare.ts reads it). */
function bareRatio() {
  writeFileSync(`/tmp/${DB}.key`, state.keys[0]!);
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', 'bench/search/bare.ts', '--db', DB, '--base', args.base!, '--modes', 'hybrid', '--samples', String(SAMPLES)],
    { encoding: 'utf8' },
  );
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

/**
 * Search benchmark on PostgreSQL: loads N synthetic memories through the REST bulk endpoint
 * into one collection (plus a few small ones), then measures search per mode, with and without
 * filters, at concurrency 1 and 8 (server-side search_ms and end-to-end HTTP latency, QPS).
 *
 *   node --import tsx bench/search/run.ts --n 100000 [--db NAME] [--load-only | --skip-load | --after-load-only]
 *                                          [--no-auto-analyze] [--keep] [--only NAME-PART | --scenarios NAME,NAME]
 *
 * The bench never analyzes for the service: the loading server runs its worker, so the planner
 * statistics are the service's own (the `analyze_tables` job that bulk writes queue). Right
 * after the load, once that job has run, hybrid search is measured on the loading server (the
 * "right after load" row, `after_load` in the results); then `VACUUM` (visibility map only, as
 * autovacuum would do in time; no ANALYZE), a restart and the full set of scenarios.
 * `--no-auto-analyze` loads with ORGMEM_AUTO_ANALYZE=0 (what the row was before the job);
 * `--after-load-only` stops after that row. The load reports its CPU time per memory: the
 * server's, and the rest of the machine's (PostgreSQL's backends and this client).
 * `--without-vector-index` drops the HNSW index before loading and stops after the load;
 * `--binary-vector-index` puts one on the binary-quantized vector in its place (the same
 * parameters, Hamming distance) and stops after the load too.
 *
 * Engine numbers use ORGMEM_EMBEDDER=hash (no model cost); bench/search/embedder-cost.ts
 * measures the bundled model's query cost separately. Results: bench/results/search-<n>.json.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { backendCpuSeconds, backendCpuSince, machineCpuSeconds, processCpuSeconds } from '../lib/cpu.ts';
import { api, createDatabase, createTenantKey, dropDatabase, startOrgmem } from '../lib/server.ts';
import { bulkLoad } from '../lib/load.ts';
import { pool, round, summary } from '../lib/stats.ts';
import { queries } from './corpus.ts';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '100000' },
    db: { type: 'string' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'skip-load': { type: 'boolean', default: false },
    'load-only': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    port: { type: 'string', default: '18931' },
    samples: { type: 'string', default: '200' },
    'load-concurrency': { type: 'string', default: '4' },
    // Only the scenarios whose name contains this (quick iterations; the README's numbers are full runs).
    only: { type: 'string', default: '' },
    // Only these scenarios, by exact name, comma-separated (e.g. "hybrid,vector").
    scenarios: { type: 'string' },
    'after-load-only': { type: 'boolean', default: false },
    'no-auto-analyze': { type: 'boolean', default: false },
    // Diagnostic: load without the HNSW index (dropped before the load; stops after it), to see what the rest of an insert costs.
    'without-vector-index': { type: 'boolean', default: false },
    // Diagnostic: load with the HNSW index on the binary-quantized vector (Hamming) in place of the
    // full one (stops after the load: search does not use that index), for what that index costs a row.
    'binary-vector-index': { type: 'boolean', default: false },
  },
});
const N = Number(args.n);
const dbName = args.db ?? `orgmem_bench_${N}`;
const SAMPLES = Number(args.samples);
const MAIN = 'main';
const SMALL = ['notes-a', 'notes-b', 'notes-c', 'notes-d'];
const SMALL_SIZE = 2000;
const LIMIT = 10;

const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const dbUrl = await createDatabase(args.base!, dbName, !args['skip-load']);
const env = {
  DATABASE_URL: dbUrl,
  ORGMEM_EMBEDDER: 'hash',
  ORGMEM_DB_POOL: '10',
  ORGMEM_RATE_LIMIT: 'false',
  ORGMEM_AUTO_ANALYZE: args['no-auto-analyze'] ? '0' : '1',
};
const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
const results: Record<string, unknown> = { n: N, database: dbName, at: new Date().toISOString(), auto_analyze: !args['no-auto-analyze'] };
const suffix = args['no-auto-analyze'] ? '.no-auto-analyze' : '';

let key: string;
let server = await startOrgmem(env, Number(args.port), { worker: !args['skip-load'] });
try {
  if (!args['skip-load']) {
    key = createTenantKey(env, 'bench');
    if (args['without-vector-index'] || args['binary-vector-index']) await sql`drop index memories_embedding`;
    if (args['binary-vector-index']) {
      const [{ dims }] = await sql<
        [{ dims: number }]
      >`select atttypmod as dims from pg_attribute where attrelid = 'memories'::regclass and attname = 'embedding'`;
      await sql.unsafe(
        `create index memories_embedding_bit on memories using hnsw ((binary_quantize(embedding)::bit(${dims})) bit_hamming_ops) with (m = 12, ef_construction = 32)`,
      );
    }
    writeFileSync(`/tmp/${dbName}.key`, key);
    results.insert = await load(key);
    mkdirSync('bench/results', { recursive: true });
    if (args['without-vector-index'] || args['binary-vector-index']) {
      await server.stop();
      await sql.end();
      await dropDatabase(args.base!, dbName);
      process.exit(0);
    }
    writeFileSync(`bench/results/search-${N}.insert.json`, JSON.stringify(results.insert, null, 2));
    results.after_load = await afterLoad(key);
    if (args['after-load-only']) {
      await server.stop();
      await sql.end();
      writeFileSync(`bench/results/search-${N}.after-load${suffix}.json`, JSON.stringify(results, null, 2));
      log(`wrote bench/results/search-${N}.after-load${suffix}.json`);
      if (!args.keep) await dropDatabase(args.base!, dbName);
      process.exit(0);
    }
    // The visibility map (index-only scans), as autovacuum would set it in time; the statistics stay the service's.
    log('vacuum');
    await sql`vacuum memories`;
  } else {
    key = readFileSync(`/tmp/${dbName}.key`, 'utf8');
    if (existsSync(`bench/results/search-${N}.insert.json`)) results.insert = JSON.parse(readFileSync(`bench/results/search-${N}.insert.json`, 'utf8'));
  }
  if (args['load-only']) {
    await server.stop();
    await sql.end();
    log(`loaded; the database ${dbName} is kept for a later --skip-load run`);
    process.exit(0);
  }
  // Restart so the measured server starts with cold caches and fresh connections, as after a deploy.
  await server.stop();
  server = await startOrgmem(env, Number(args.port));
  const { rows } = (await sql`select count(*)::int as rows from memories`)[0]!;
  const { size } = (await sql`select pg_size_pretty(pg_database_size(current_database())) as size`)[0]!;
  results.rows = rows;
  results.database_size = size;
  log(`${rows} memories, database ${size}`);
  results.search = await measureSearch(key);
} finally {
  await server.stop();
  await sql.end();
}
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/search-${N}.json`, JSON.stringify(results, null, 2));
log(`wrote bench/results/search-${N}.json`);
if (!args.keep) await dropDatabase(args.base!, dbName);

/** The service's own statistics job after the load, then hybrid search on the loading server. */
async function afterLoad(apiKey: string) {
  const loaded = performance.now();
  // The job bulk writes queue (key analyze_tables): waiting or running until it is gone.
  const pending = async () => (await sql`select count(*)::int as n from graphile_worker._private_jobs where key = 'analyze_tables'`)[0]!.n as number;
  while (!args['no-auto-analyze'] && (await pending()) > 0 && performance.now() - loaded < 120_000) await new Promise((r) => setTimeout(r, 250));
  const waited = round((performance.now() - loaded) / 1000);
  const [stats] = await sql`select n_live_tup::int as live, n_mod_since_analyze::int as modified_since_analyze, analyze_count::int as analyzes,
                                    autoanalyze_count::int as autoanalyzes, last_analyze from pg_stat_user_tables where relname = 'memories'`;
  log(`right after load (waited ${waited} s for the service's analyze job): ${JSON.stringify(stats)}`);
  const rows = await measureSearch(apiKey, (name) => name === 'hybrid');
  return { waited_s: waited, memories_stats: stats, search: rows };
}

async function load(apiKey: string) {
  const sets = [...SMALL.map((collection, i) => ({ collection, count: SMALL_SIZE, seed: 100 + i })), { collection: MAIN, count: N, seed: 1 }];
  const total = N + SMALL.length * SMALL_SIZE;
  log(`loading ${total} memories in bulk calls of 100`);
  const cpu = { server: processCpuSeconds(server.pid), machine: machineCpuSeconds(), backends: await backendCpuSeconds(sql) };
  const seconds = await bulkLoad(server.url, apiKey, sets, Number(args['load-concurrency']), log);
  const perSecond = Math.round(total / seconds);
  const serverMs = ((processCpuSeconds(server.pid) - cpu.server) * 1000) / total;
  const cpuMs = {
    server: round(serverMs, 3),
    // This database's backends alone: on a machine others load, the rest of the machine is theirs too.
    postgres: round((backendCpuSince(cpu.backends, await backendCpuSeconds(sql)) * 1000) / total, 3),
    rest_of_machine: round(((machineCpuSeconds() - cpu.machine) * 1000) / total - serverMs, 3),
  };
  log(`inserted ${total} in ${round(seconds)} s: ${perSecond}/s; CPU ms per memory ${JSON.stringify(cpuMs)}`);
  return {
    memories: total,
    seconds: round(seconds),
    per_second: perSecond,
    concurrency: Number(args['load-concurrency']),
    batch: 100,
    cpu_ms_per_memory: cpuMs,
  };
}

interface Scenario {
  name: string;
  path: string;
  body: Record<string, unknown>;
}

function chosen(name: string) {
  return args.scenarios ? args.scenarios.split(',').includes(name) : name.includes(args.only!);
}

async function measureSearch(apiKey: string, pick: (name: string) => boolean = chosen) {
  const C = `/v1/memory/collections/${MAIN}/search`;
  const scenarios: Scenario[] = [
    { name: 'hybrid', path: C, body: { mode: 'hybrid' } },
    { name: 'vector', path: C, body: { mode: 'vector' } },
    { name: 'text', path: C, body: { mode: 'text' } },
    { name: 'hybrid + container_tag (0.1%)', path: C, body: { mode: 'hybrid', container_tag: 'user-7' } },
    { name: 'hybrid + category (1%)', path: C, body: { mode: 'hybrid', category: 'decision' } },
    { name: 'hybrid + metadata (2%)', path: C, body: { mode: 'hybrid', metadata_filter: { project: 'p-7' } } },
    {
      name: 'hybrid + category + metadata (~0.2%)',
      path: C,
      body: { mode: 'hybrid', category: 'preference', metadata_filter: { project: 'p-3', source: 'crm' } },
    },
    { name: 'vector + container_tag (0.1%)', path: C, body: { mode: 'vector', container_tag: 'user-7' } },
    { name: 'text + container_tag (0.1%)', path: C, body: { mode: 'text', container_tag: 'user-7' } },
    { name: 'all collections, hybrid', path: '/v1/memory/search', body: { mode: 'hybrid' } },
  ];
  const qs = queries(SAMPLES * 2, 7);
  // Warm the server and PostgreSQL's caches the same way for every scenario.
  await pool(queries(50, 99), 4, async (q) => void (await api(server.url, apiKey, 'POST', C, { query: q, mode: 'hybrid', min_score: 0 })));
  const out = [];
  for (const s of scenarios.filter((x) => pick(x.name))) {
    for (const [concurrency, set] of [
      [1, qs.slice(0, SAMPLES)],
      [8, qs.slice(SAMPLES)],
    ] as const) {
      const searchMs: number[] = [];
      const httpMs: number[] = [];
      let short = 0;
      let cached = 0;
      const started = performance.now();
      await pool(set, concurrency, async (q) => {
        const t0 = performance.now();
        const res = await api(server.url, apiKey, 'POST', s.path, { query: q, limit: LIMIT, min_score: 0, ...s.body });
        httpMs.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`${s.name}: ${res.status} ${JSON.stringify(res.body)}`);
        searchMs.push(res.body.search_ms);
        if (res.body.cached) cached++;
        // Text mode only returns memories sharing a word with the query, so only it may be short.
        if (res.body.results.length < LIMIT && s.body.mode !== 'text') short++;
      });
      const seconds = (performance.now() - started) / 1000;
      const row = {
        scenario: s.name,
        concurrency,
        samples: set.length,
        search_ms: summary(searchMs),
        http_ms: summary(httpMs),
        qps: round(set.length / seconds),
        short_results: short,
        cached,
      };
      log(JSON.stringify(row));
      out.push(row);
    }
  }
  return out;
}

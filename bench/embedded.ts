/**
 * The embedded default as a user gets it: `orgmem serve` on a PGlite data directory with the
 * bundled embedder (USE-lite), its worker in the same process. Measures the first write after the
 * start (the model is loaded at start, not by that request), bulk insert of N memories (100 per
 * call, 4 calls in flight), then hybrid search over them at concurrency 1 and 4 (end-to-end HTTP
 * latency, and the server's own split: query embedding and search), then search latency for one
 * client while `--during` more memories are bulk loaded, and the server's CPU time per memory
 * and per query.
 *
 *   npm run build:js && node --import tsx bench/embedded.ts [--n 10000] [--samples 200] [--threads N] [--embedder hash]
 *
 * `--threads` sets ORGMEM_EMBEDDER_THREADS (model threads; default one a core); `--embedder hash`
 * runs the same without the model, to show what the database and HTTP cost alone. The data
 * directory is a fresh temporary one, removed at the end. Results: bench/results/embedded-<n>.json
 * (embedded-<n>-hash.json with the hash embedder).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { processCpuSeconds } from './lib/cpu.ts';
import { bulkLoad } from './lib/load.ts';
import { api, createTenantKey, startOrgmem } from './lib/server.ts';
import { pool, round, summary } from './lib/stats.ts';
import { queries } from './search/corpus.ts';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '10000' },
    samples: { type: 'string', default: '200' },
    threads: { type: 'string' },
    // hash: the same run without the model, to show what the database and HTTP cost alone.
    embedder: { type: 'string', default: 'local' },
    port: { type: 'string', default: '18941' },
    // Memories loaded after the measurements while one client searches: search latency under a bulk load.
    during: { type: 'string', default: '1000' },
  },
});
const N = Number(args.n);
const SAMPLES = Number(args.samples);
const COLLECTION = 'main';
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const dir = mkdtempSync(join(tmpdir(), 'orgmem-embedded-bench-'));
const env: Record<string, string> = {
  ORGMEM_DATA_DIR: dir,
  ORGMEM_EMBEDDER: args.embedder!,
  ORGMEM_RATE_LIMIT: 'false',
  ...(args.threads ? { ORGMEM_EMBEDDER_THREADS: args.threads } : {}),
};
try {
  // One process at a time on a PGlite directory: the tenant is made before the server opens it.
  const key = createTenantKey(env, 'embedded-bench');
  const startedAt = performance.now();
  const server = await startOrgmem(env, Number(args.port), { worker: true });
  const startS = round((performance.now() - startedAt) / 1000);
  try {
    const firstWriteMs = await firstWrite(server.url, key);
    const cpu0 = processCpuSeconds(server.pid);
    const insert = await load(server.url, key);
    const cpu1 = processCpuSeconds(server.pid);
    const searchRows = await search(server.url, key);
    const cpu2 = processCpuSeconds(server.pid);
    const during = Number(args.during) ? await searchDuringLoad(server.url, key, Number(args.during)) : null;
    const cpu = { insert_ms_per_memory: round(((cpu1 - cpu0) * 1000) / N, 2), search_ms_per_query: round(((cpu2 - cpu1) * 1000) / (SAMPLES * 2 + 20), 2) };
    log(`server CPU: ${JSON.stringify(cpu)}`);
    const results = {
      n: N,
      embedder: args.embedder,
      threads: args.threads ?? 'default',
      start_s: startS,
      first_write_ms: firstWriteMs,
      insert,
      search: searchRows,
      search_during_load: during,
      server_cpu: cpu,
    };
    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/embedded-${N}${args.embedder === 'local' ? '' : `-${args.embedder}`}.json`;
    writeFileSync(file, JSON.stringify(results, null, 2));
    log(`wrote ${file}`);
  } finally {
    await server.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** One memory right after the server answers its health check: what the first user waits. */
async function firstWrite(url: string, key: string) {
  const t0 = performance.now();
  const res = await api(url, key, 'POST', `/v1/memory/collections/first/memories`, { text: 'The first memory after the start.' });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  const ms = round(performance.now() - t0);
  log(`first write after start: ${ms} ms`);
  return ms;
}

async function load(url: string, key: string, count = N, seed = 1) {
  const seconds = await bulkLoad(url, key, [{ collection: COLLECTION, count, seed }], 4, log);
  const perSecond = round(count / seconds);
  log(`inserted ${count} in ${round(seconds)} s: ${perSecond}/s`);
  return { memories: count, seconds: round(seconds), per_second: perSecond, batch: 100, concurrency: 4 };
}

/** Hybrid search with distinct queries (so neither cache answers): 20 first, then at concurrency 1 and 4. */
async function search(url: string, key: string) {
  const path = `/v1/memory/collections/${COLLECTION}/search`;
  const qs = queries(SAMPLES * 2 + 20, 7);
  // The first ones run while the graph fill the load queued (at ORGMEM_GRAPH_FROM) goes on: timed apart.
  const first: number[] = [];
  for (const q of qs.slice(0, 20)) {
    const t0 = performance.now();
    await api(url, key, 'POST', path, { query: q, mode: 'hybrid', min_score: 0 });
    first.push(performance.now() - t0);
  }
  log(`first 20 searches after the load (the graph fill running): ${JSON.stringify({ http_ms: summary(first), max_ms: round(Math.max(...first)) })}`);
  const out = [];
  for (const [concurrency, set] of [
    [1, qs.slice(20, 20 + SAMPLES)],
    [4, qs.slice(20 + SAMPLES)],
  ] as const) {
    const http: number[] = [];
    const embedding: number[] = [];
    const engine: number[] = [];
    const started = performance.now();
    await pool(set, concurrency, async (q) => {
      const t0 = performance.now();
      const res = await api(url, key, 'POST', path, { query: q, mode: 'hybrid', limit: 10, min_score: 0 });
      http.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body)}`);
      if (res.body.cached) throw new Error('a distinct query was answered from the cache');
      embedding.push(res.body.query_embedding_ms);
      engine.push(res.body.search_ms);
    });
    const row = {
      concurrency,
      samples: set.length,
      http_ms: summary(http),
      query_embedding_ms: summary(embedding),
      search_ms: summary(engine),
      qps: round(set.length / ((performance.now() - started) / 1000)),
    };
    log(`hybrid search at ${N}: ${JSON.stringify(row)}`);
    out.push(row);
  }
  return out;
}

/** One client searching, one query after the other, while `count` more memories are bulk loaded. */
async function searchDuringLoad(url: string, key: string, count: number) {
  const path = `/v1/memory/collections/${COLLECTION}/search`;
  const http: number[] = [];
  let loading = true;
  const loaded = load(url, key, count, 2).finally(() => (loading = false));
  const qs = queries(1000, 13);
  for (let i = 0; loading; i++) {
    const t0 = performance.now();
    const res = await api(url, key, 'POST', path, { query: qs[i % qs.length], mode: 'hybrid', limit: 10, min_score: 0 });
    if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body)}`);
    http.push(performance.now() - t0);
  }
  const insert = await loaded;
  const row = { samples: http.length, http_ms: summary(http), insert_per_second: insert.per_second };
  log(`hybrid search during a bulk load of ${count}: ${JSON.stringify(row)}`);
  return row;
}

/**
 * What trust costs on PostgreSQL (docs/trust.md): the quarantine's screen on a bulk load, and the
 * influence ledger on search.
 *
 *   npm run build:js && node --import tsx bench/trust.ts [--n 100000] [--screen 10000] [--samples 1000] [--blocks 20]
 *
 * 1. Screening: `--screen` memories of the synthetic corpus (search/corpus.ts) through the REST
 *    bulk endpoint, 100 a call, 4 calls in flight, after a warm-up block, in blocks of 1,000 in
 *    alternating order (ABBA) with the
 *    agent class's policy at `quarantine` (every text screened) and at `off` (none): inserts per
 *    second each way, in the same run.
 * 2. The collection is filled to `--n` memories; then two servers on the same database, one with
 *    the ledger (ORGMEM_LEDGER_DAYS=30) and one without (0), answer the same hybrid searches in
 *    alternating blocks, one at a time (concurrency 1) and eight at a time: p50 and p95 of the HTTP
 *    latency each way, and how many entries the ledger wrote.
 *
 * Results: bench/results/trust-<n>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { api, createDatabase, createTenantKey, startOrgmem, type RunningServer } from './lib/server.ts';
import { bulkLoad } from './lib/load.ts';
import { percentile, pool, round } from './lib/stats.ts';
import { queries } from './search/corpus.ts';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '100000' },
    screen: { type: 'string', default: '10000' },
    samples: { type: 'string', default: '1000' },
    blocks: { type: 'string', default: '20' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    port: { type: 'string', default: '18951' },
  },
});
const N = Number(args.n);
const SCREEN = Number(args.screen);
const BLOCKS = Number(args.blocks);
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const dbUrl = await createDatabase(args.base!, `orgmem_bench_trust_${N}`, true);
const env = { DATABASE_URL: dbUrl, ORGMEM_EMBEDDER: 'hash', ORGMEM_RATE_LIMIT: 'false' };
const results: Record<string, unknown> = { n: N, at: new Date().toISOString() };
const port = Number(args.port);

const loader = await startOrgmem(env, port, { worker: true });
const key = createTenantKey(env, 'bench', 'enterprise');
const policy = (agent: 'quarantine' | 'off') => api(loader.url, key, 'PUT', '/v1/memory/quarantine/policy', { agent });

// 1. The screen on a bulk load: alternating blocks, so both ways see the same table size and load.
const rate: Record<'quarantine' | 'off', { memories: number; seconds: number }> = { quarantine: { memories: 0, seconds: 0 }, off: { memories: 0, seconds: 0 } };
const block = 1000;
// A first block unmeasured (the server's code warms up), then pairs in alternating order (ABBA).
await bulkLoad(loader.url, key, [{ collection: 'main', count: block, seed: 999 }], 4, log);
for (let i = 0; i < SCREEN / block; i++) {
  const mode = (i + (i >> 1)) % 2 ? 'off' : 'quarantine';
  if ((await policy(mode)).status !== 200) throw new Error('the policy was not set');
  rate[mode].seconds += await bulkLoad(loader.url, key, [{ collection: 'main', count: block, seed: 1000 + i }], 4, log);
  rate[mode].memories += block;
}
const perSecond = (m: 'quarantine' | 'off') => round(rate[m].memories / rate[m].seconds, 0);
results.screen = { screened: perSecond('quarantine'), unscreened: perSecond('off'), memories: SCREEN };
log(`bulk insert: ${perSecond('quarantine')}/s screened, ${perSecond('off')}/s unscreened`);

// 2. Filled to N (screened: the default), then searched with the ledger on and off.
await policy('quarantine');
if (N > SCREEN + block) await bulkLoad(loader.url, key, [{ collection: 'main', count: N - SCREEN - block, seed: 7 }], 4, log);
await loader.stop();

const servers: Record<'on' | 'off', RunningServer> = {
  on: await startOrgmem({ ...env, ORGMEM_LEDGER_DAYS: '30' }, port),
  off: await startOrgmem({ ...env, ORGMEM_LEDGER_DAYS: '0' }, port + 1),
};
// 100 more than measured, for the warm-up: no measured query is answered from the cache. The
// corpus has some 1,500 distinct queries: --samples stays well below that.
const asked = queries(Number(args.samples) + 100, 11);
async function searches(server: RunningServer, from: number, count: number, clients: number): Promise<number[]> {
  const latencies: number[] = [];
  await pool(
    Array.from({ length: count }, (_, i) => asked[(from + i) % asked.length]!),
    clients,
    async (query) => {
      const t0 = performance.now();
      const res = await api(server.url, key, 'POST', '/v1/memory/collections/main/search', { query, limit: 10 });
      if (res.status !== 200) throw new Error(`search: ${res.status}`);
      latencies.push(performance.now() - t0);
    },
  );
  return latencies;
}
const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
for (const clients of [1, 8]) {
  const samples: Record<'on' | 'off', number[]> = { on: [], off: [] };
  const perBlock = Math.ceil(Number(args.samples) / BLOCKS);
  for (const mode of ['on', 'off'] as const) await searches(servers[mode], Number(args.samples), 100, clients); // warm-up
  const [before] = await sql<[{ n: number }]>`select count(*)::int as n from memory_ledger`;
  for (let b = 0; b < BLOCKS; b++) {
    for (const mode of b % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      // The same queries each way (different ones each block): the answer cache helps both alike.
      samples[mode].push(...(await searches(servers[mode], b * perBlock, perBlock, clients)));
    }
  }
  await new Promise((r) => setTimeout(r, 2000)); // the ledger's last flush
  const [after] = await sql<[{ n: number }]>`select count(*)::int as n from memory_ledger`;
  const row = (s: number[]) => ({ p50: round(percentile(s, 50), 2), p95: round(percentile(s, 95), 2) });
  const entry = { ledger_on: row(samples.on), ledger_off: row(samples.off), entries_written: after!.n - before!.n, searches: samples.on.length };
  results[`search_c${clients}`] = entry;
  log(`search c=${clients}: ledger on ${JSON.stringify(entry.ledger_on)} ms, off ${JSON.stringify(entry.ledger_off)} ms, entries ${entry.entries_written}`);
}
await sql.end();
await Promise.all(Object.values(servers).map((s) => s.stop()));
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/trust-${N}.json`, `${JSON.stringify(results, null, 2)}\n`);

/**
 * The coordinator's hop: the same requests to orgmem on plain PostgreSQL and on Citus, in pairs.
 * Runs on the two databases bench/search/curve.ts loaded with the same memories over the same
 * tenants (one on the local server, one on a Citus coordinator, `--base` on it), each served by
 * its own `orgmem serve` (API only, hash embedder), both running. Every round sends each request
 * to both servers, one right after the other in an order drawn per round, so the two answers of
 * a pair meet the same load on a shared machine; the figure is the median of the pairs'
 * differences, beside each side's own p50 and p95:
 *
 * - a listing of a small tenant's collections (one read of a distributed table after
 *   authentication: about one hop);
 * - hybrid search on the large tenant (10,000 memories at 100k) and on a small one, a query of
 *   its own each round (so no result cache answers), `search_ms` and HTTP;
 * - one memory written to a small tenant's collection `hop` (HTTP).
 *
 * And what PostgreSQL spent over the measured rounds, per round (one request of each kind): on
 * plain PostgreSQL the backends of its database; on Citus each instance of the cluster, whole
 * (bench/lib/cpu.ts: the cluster must be this run's alone), coordinator and workers apart.
 *
 *   node --import tsx bench/search/citus-hop.ts [--pg orgmem_citus_curve_pg] [--citus orgmem_citus_curve]
 *        [--pg-base postgres://postgres@127.0.0.1:5432/postgres] [--citus-base postgres://postgres@127.0.0.1:5433/postgres]
 *        [--rounds 200] [--port 18981]
 *
 * The tenants' keys come from bench/results/curve-<db>.state.json. Results:
 * bench/results/citus-hop.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { backendCpuSeconds, backendCpuSince, instanceCpuSeconds } from '../lib/cpu.ts';
import { api, at, citusWorkers, startOrgmem } from '../lib/server.ts';
import { percentile, rng, round, summary } from '../lib/stats.ts';
import { queries } from './corpus.ts';

const { values: args } = parseArgs({
  options: {
    pg: { type: 'string', default: 'orgmem_citus_curve_pg' },
    citus: { type: 'string', default: 'orgmem_citus_curve' },
    'pg-base': { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'citus-base': { type: 'string', default: 'postgres://postgres@127.0.0.1:5433/postgres' },
    rounds: { type: 'string', default: '200' },
    port: { type: 'string', default: '18981' },
  },
});
const ROUNDS = Number(args.rounds);
const keysOf = (db: string) => (JSON.parse(readFileSync(`bench/results/curve-${db}.state.json`, 'utf8')) as { keys: string[] }).keys;
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const env = (url: string) => ({ DATABASE_URL: url, ORGMEM_EMBEDDER: 'hash', ORGMEM_DB_POOL: '10', ORGMEM_RATE_LIMIT: 'false' });
const sides = [
  { name: 'postgres', keys: keysOf(args.pg!), server: await startOrgmem(env(at(args['pg-base']!, args.pg!)), Number(args.port)) },
  { name: 'citus', keys: keysOf(args.citus!), server: await startOrgmem(env(at(args['citus-base']!, args.citus!)), Number(args.port) + 1) },
] as const;

type Sample = { http: number; search?: number };
const kinds = ['collections, small tenant', 'hybrid search, large tenant', 'hybrid search, small tenant', 'create one memory, small tenant'] as const;
const samples = new Map(kinds.map((k) => [k, { postgres: [] as Sample[], citus: [] as Sample[] }]));

/** One request of `kind` for round `i` to `side`: the same tenant (by position) and body on both. */
async function one(kind: (typeof kinds)[number], side: (typeof sides)[number], i: number, query: string): Promise<Sample> {
  const small = side.keys[1 + ((i * 37) % (side.keys.length - 1))]!;
  const t0 = performance.now();
  const res =
    kind === 'collections, small tenant'
      ? await api(side.server.url, small, 'GET', '/v1/memory/collections')
      : kind === 'create one memory, small tenant'
        ? await api(side.server.url, small, 'POST', '/v1/memory/collections/hop/memories', { text: `hop round ${i}: ${query}` })
        : await api(side.server.url, kind === 'hybrid search, large tenant' ? side.keys[0]! : small, 'POST', '/v1/memory/collections/main/search', {
            query,
            mode: 'hybrid',
            limit: 10,
            min_score: 0,
          });
  const http = performance.now() - t0;
  if (res.status >= 300) throw new Error(`${kind} on ${side.name}: ${res.status} ${JSON.stringify(res.body)}`);
  return { http, search: (res.body as { search_ms?: number })?.search_ms };
}

const pg = postgres(at(args['pg-base']!, args.pg!), { max: 1, onnotice: () => {} });
const coordinator = postgres(at(args['citus-base']!, args.citus!), { max: 1, onnotice: () => {} });
const workers = ((await citusWorkers(at(args['citus-base']!, args.citus!))) ?? []).map((w) => postgres(w, { max: 1, onnotice: () => {} }));
const cpu = async () => ({
  postgres: await backendCpuSeconds(pg),
  coordinator: await instanceCpuSeconds(coordinator),
  workers: (await Promise.all(workers.map(instanceCpuSeconds))).reduce((a, b) => a + b, 0),
});
const order = rng(11);
const loadBefore = loadAverage();
let spent: Record<string, number> = {};
try {
  // Warm both: pools open, pages read.
  for (const [i, q] of queries(30, 98).entries()) for (const side of sides) for (const kind of kinds) await one(kind, side, 100_000 + i, q);
  const before = await cpu();
  for (const [i, q] of queries(ROUNDS, 97).entries()) {
    for (const kind of kinds) {
      const pair = order.next() < 0.5 ? [sides[0], sides[1]] : [sides[1], sides[0]];
      for (const side of pair) samples.get(kind)![side.name].push(await one(kind, side, i, q));
    }
  }
  const after = await cpu();
  const perRound = (seconds: number) => round((seconds * 1000) / ROUNDS, 2);
  spent = {
    postgres_ms_per_round: perRound(backendCpuSince(before.postgres, after.postgres)),
    citus_coordinator_ms_per_round: perRound(after.coordinator - before.coordinator),
    citus_workers_ms_per_round: perRound(after.workers - before.workers),
  };
} finally {
  for (const side of sides) await side.server.stop();
  for (const db of [pg, coordinator, ...workers]) await db.end();
}

const rows = kinds.map((kind) => {
  const { postgres, citus } = samples.get(kind)!;
  const figure = (pick: (s: Sample) => number | undefined) => {
    if (postgres.some((s) => pick(s) === undefined)) return undefined;
    const diffs = citus.map((c, i) => pick(c)! - pick(postgres[i]!)!);
    return { postgres: summary(postgres.map((s) => pick(s)!)), citus: summary(citus.map((s) => pick(s)!)), hop_p50: round(percentile(diffs, 50)) };
  };
  return { kind, http_ms: figure((s) => s.http), search_ms: figure((s) => s.search) };
});
for (const r of rows) console.log(JSON.stringify(r));
console.log(JSON.stringify({ cpu: spent }));
const out = { at: new Date().toISOString(), rounds: ROUNDS, load_average: { before: loadBefore, after: loadAverage() }, rows, cpu: spent };
writeFileSync('bench/results/citus-hop.json', JSON.stringify(out, null, 2));
console.log(`load average ${loadBefore} -> ${out.load_average.after}; wrote bench/results/citus-hop.json`);

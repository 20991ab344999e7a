/**
 * The constants of search's exact-read cost model (src/services/search/exact-cost.ts): the same
 * searches forced through the exact read and forced through the indexes, per collection, in this
 * process, on PostgreSQL or on the embedded PGlite.
 *
 *   node --import tsx bench/search/exact-cost.ts --db NAME [--samples 60] [--collections main,notes-a] [--reranks 1,50]
 *   npm run build:js && node --import tsx bench/search/exact-cost.ts --data-dir DIR [--n 10000] ...
 *
 * `--db`: a PostgreSQL database loaded by `bench/search/run.ts --n N --load-only` (`main` with N
 * memories and four of 2,000; hash embedder). `--data-dir`: a PGlite data directory with the
 * bundled model, the embedded default; when DIR does not exist it is first loaded the same way
 * (`main` with `--n` memories, `notes-a` with 2,000) by `orgmem serve` on it, its key kept in
 * DIR.key.
 *
 * For each collection and mode (hybrid, vector), the service's `search_ms` with
 * ORGMEM_SEARCH_EXACT_MAX forced to "everything" (the exact read) and to 0 (the HNSW graph and
 * the full-text index), alternating query by query, and the collection's and the table's sizes.
 * The index side is measured once for each `--reranks` value (ORGMEM_VECTOR_RERANK): on a binary
 * storage that sets the walk's candidates (walkEf), so two values give the cost of each
 * candidate more; on a float storage the walk keeps ef_search whatever the value. The per-row
 * cost is the slope of the exact times over the collection sizes; the index side's fixed cost
 * comes from `main`, the cost per extra graph visit from the walks' difference or from a small
 * collection in a large table (whose walk visits about k x table / collection rows).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { searchFields } from '../../src/schemas/search.ts';
import { walkEf } from '../../src/services/search/exact-cost.ts';
import { candidateCount, search } from '../../src/services/search/search.ts';
import { fillGraph } from '../../src/services/memory/graph-tenants.ts';
import { bulkLoad } from '../lib/load.ts';
import { createTenantKey, startOrgmem } from '../lib/server.ts';
import { percentile, round } from '../lib/stats.ts';
import { queries } from './corpus.ts';
import { openInProcess, type BenchDatabase } from './in-process.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'data-dir': { type: 'string' },
    n: { type: 'string', default: '10000' },
    port: { type: 'string', default: '18942' },
    samples: { type: 'string', default: '60' },
    collections: { type: 'string', default: 'main,notes-a' },
    modes: { type: 'string', default: 'hybrid,vector' },
    reranks: { type: 'string', default: '50' },
  },
});
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const dataDir = args['data-dir'];
if (!dataDir === !args.db) throw new Error('pass --db NAME (PostgreSQL) or --data-dir DIR (PGlite)');
if (dataDir && !existsSync(dataDir)) await loadEmbedded(dataDir);
const where: BenchDatabase = dataDir ? { dataDir } : { base: args.base!, db: args.db! };
const { app, ctx, close } = await openInProcess(where, 10, { ORGMEM_SEARCH_CACHE_MB: '0' });
const input = z.object(searchFields);
try {
  // The load's fill job may not have finished before its server stopped: the graph path needs it done.
  await fillGraph(app, ctx.tenant.id);
  const { table } = (await app.db.query<{ table: number }>(`select count(*)::int as table from memories`))[0]!;
  const reranks = args.reranks!.split(',').map(Number);
  const run = async (collection: string, mode: string, query: string, exactMax: number, rerank: number) => {
    app.config.search.exactScanMax = exactMax;
    app.config.search.rerank = rerank;
    return (await search(ctx, input.parse({ query, mode, limit: 10, min_score: 0 }), { collection, nameCollections: false })).search_ms;
  };
  // The walk's candidates at each rerank, for the k of a search of 10 results.
  const efAt = (rerank: number) => {
    app.config.search.rerank = rerank;
    return walkEf(app, false, candidateCount(10));
  };
  for (const q of queries(30, 99)) await run('main', 'hybrid', q, 0, reranks[0]!);
  for (const collection of args.collections!.split(',')) {
    const { n } = (
      await app.db.query<{ n: number }>(`select count(*)::int as n from memories where tenant_id = $1 and collection = $2`, [ctx.tenant.id, collection])
    )[0]!;
    for (const mode of args.modes!.split(',')) {
      const exact: number[] = [];
      const index = reranks.map(() => [] as number[]);
      for (const [i, q] of queries(Number(args.samples), 7).entries()) {
        const paths = [() => run(collection, mode, q, Number.MAX_SAFE_INTEGER, reranks[0]!).then((ms) => void exact.push(ms))];
        for (const [j, rerank] of reranks.entries()) paths.push(() => run(collection, mode, q, 0, rerank).then((ms) => void index[j]!.push(ms)));
        if (i % 2) paths.reverse();
        for (const path of paths) await path();
      }
      const p50 = (xs: number[]) => round(percentile(xs, 50), 2);
      console.log(
        JSON.stringify({
          database: args.db ?? dataDir,
          kind: app.db.kind,
          storage: app.vectorStorage,
          collection,
          memories: n,
          table,
          mode,
          exact_p50: p50(exact),
          exact_us_per_row: round((percentile(exact, 50) * 1000) / n, 2),
          index_p50: Object.fromEntries(reranks.map((r, j) => [`rerank ${r}, ef ${efAt(r)}`, p50(index[j]!)])),
        }),
      );
    }
  }
} finally {
  await close();
}

/** A PGlite data directory loaded as bench/search/run.ts loads PostgreSQL: `main` with --n memories and `notes-a` with 2,000. */
async function loadEmbedded(dir: string) {
  const env = { ORGMEM_DATA_DIR: dir, ORGMEM_EMBEDDER: 'local', ORGMEM_RATE_LIMIT: 'false' };
  const key = createTenantKey(env, 'exact-cost');
  writeFileSync(`${dir}.key`, key);
  const server = await startOrgmem(env, Number(args.port), { worker: true });
  try {
    const sets = [
      { collection: 'notes-a', count: 2000, seed: 100 },
      { collection: 'main', count: Number(args.n), seed: 1 },
    ];
    log(`loading ${Number(args.n) + 2000} memories into ${dir}`);
    const seconds = await bulkLoad(server.url, key, sets, 4, log);
    log(`loaded in ${round(seconds)} s`);
  } finally {
    await server.stop();
  }
}

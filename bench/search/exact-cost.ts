/**
 * The constants of search's exact-read cost model (src/services/search/exact-cost.ts): on a
 * database loaded by `bench/search/run.ts --n N --load-only`, the same searches forced through
 * the exact read and forced through the indexes, per collection, in this process.
 *
 *   node --import tsx bench/search/exact-cost.ts --db NAME [--samples 60] [--collections main,notes-a]
 *
 * For each collection (run.ts loads `main` with N memories and four of 2,000) and mode (hybrid,
 * vector), the service's `search_ms` with ORGMEM_SEARCH_EXACT_MAX forced to "everything" (the
 * exact read) and to 0 (the HNSW graph and the full-text index), alternating query by query, and
 * the collection's and the table's sizes. The per-row cost is the slope of the exact times over
 * the collection sizes; the index side's fixed cost comes from `main`, the cost per extra graph
 * visit from a small collection (whose walk visits about k x table / collection rows).
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { searchFields } from '../../src/schemas/search.ts';
import { search } from '../../src/services/search/search.ts';
import { percentile, round } from '../lib/stats.ts';
import { queries } from './corpus.ts';
import { openInProcess } from './in-process.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    samples: { type: 'string', default: '60' },
    collections: { type: 'string', default: 'main,notes-a' },
    modes: { type: 'string', default: 'hybrid,vector' },
  },
});
const { app, ctx, close } = await openInProcess(args.base!, args.db!, 10, { ORGMEM_SEARCH_CACHE_MB: '0' });
const input = z.object(searchFields);
try {
  const { table } = (await app.db.query<{ table: number }>(`select count(*)::int as table from memories`))[0]!;
  const run = async (collection: string, mode: string, query: string, exactMax: number) => {
    app.config.search.exactScanMax = exactMax;
    return (await search(ctx, input.parse({ query, mode, limit: 10, min_score: 0 }), { collection, nameCollections: false })).search_ms;
  };
  for (const q of queries(30, 99)) await run('main', 'hybrid', q, 0);
  for (const collection of args.collections!.split(',')) {
    const { n } = (
      await app.db.query<{ n: number }>(`select count(*)::int as n from memories where tenant_id = $1 and collection = $2`, [ctx.tenant.id, collection])
    )[0]!;
    for (const mode of args.modes!.split(',')) {
      const exact: number[] = [];
      const index: number[] = [];
      for (const [i, q] of queries(Number(args.samples), 7).entries()) {
        const e = () => run(collection, mode, q, Number.MAX_SAFE_INTEGER).then((ms) => void exact.push(ms));
        const x = () => run(collection, mode, q, 0).then((ms) => void index.push(ms));
        if (i % 2) await e().then(x);
        else await x().then(e);
      }
      const p50 = (xs: number[]) => round(percentile(xs, 50), 2);
      console.log(
        JSON.stringify({
          database: args.db,
          collection,
          memories: n,
          table,
          mode,
          exact_p50: p50(exact),
          index_p50: p50(index),
          exact_us_per_row: round((percentile(exact, 50) * 1000) / n, 2),
        }),
      );
    }
  }
} finally {
  await close();
}

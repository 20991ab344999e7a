/**
 * Recall@10 of the HNSW index against an exact scan at each ef_search given, for stored vectors
 * used as queries, or the vectors of a query table's column `v` (dense-vectors.ts writes
 * `dense_queries`) (bench/search/hnsw-params.sh runs it per graph setting).
 *
 *   node --import tsx bench/search/hnsw-recall.ts <database> [queries = 200] [ef_search,... = 40] [query table]
 *
 * The benchmark's hash embedder gives many memories the very same vector, so the ten nearest are
 * often not unique: an approximate neighbour counts as found when it is no farther than the
 * exact tenth. The graph is partial on `graphed` (sql/039), so both scans read those rows. Both
 * scans force a custom plan: postgres.js prepares each statement, and a generic plan would keep
 * the index for the exact scan too once chosen (plan settings are read when a statement is
 * planned, not when it runs).
 */
import postgres from 'postgres';

const [db, count = '200', efs = '40', table] = process.argv.slice(2);
const sql = postgres(`postgres://postgres@127.0.0.1:5432/${db}`, { max: 1, onnotice: () => {} });
const queries = table
  ? await sql`select v::text as e from ${sql(table)} order by i limit ${Number(count)}`
  : await sql`select embedding::text as e from memories tablesample system (1) repeatable (1) limit ${Number(count)}`;
const nearest = (e: string, settings: string) =>
  sql.begin(async (tx) => {
    await tx.unsafe(`set local plan_cache_mode = force_custom_plan; ${settings}`);
    return tx<Array<{ d: number }>>`select embedding <=> ${e}::vector as d from memories where graphed order by embedding <=> ${e}::vector limit 10`;
  });
const tenths: number[] = [];
for (const { e } of queries) tenths.push((await nearest(e, 'set local enable_indexscan = off')).at(-1)!.d);
for (const ef of efs.split(',').map(Number)) {
  let found = 0;
  const started = performance.now();
  for (const [i, { e }] of queries.entries()) {
    found += (await nearest(e, `set local hnsw.ef_search = ${ef}`)).filter((r) => r.d <= tenths[i]! + 1e-6).length;
  }
  const ms = (performance.now() - started) / queries.length;
  console.log(`${db}: ef_search ${ef}: recall@10 ${(found / (10 * queries.length)).toFixed(3)} over ${queries.length} queries, ${ms.toFixed(1)} ms per query`);
}
await sql.end();

/**
 * Recall@10 of the HNSW index at ef_search 40 against an exact scan, for stored vectors used as
 * queries (bench/search/hnsw-params.sh runs it per graph setting).
 *
 *   node --import tsx bench/search/hnsw-recall.ts <database> [queries = 200]
 */
import postgres from 'postgres';

const [db, count = '200'] = process.argv.slice(2);
const sql = postgres(`postgres://postgres@127.0.0.1:5432/${db}`, { max: 1, onnotice: () => {} });
const queries = await sql`select embedding::text as e from memories tablesample system (1) limit ${Number(count)}`;
let found = 0;
let wanted = 0;
for (const { e } of queries) {
  const exact = await sql.begin(async (tx) => {
    await tx`set local enable_indexscan = off`;
    return tx`select id from memories order by embedding <=> ${e}::vector limit 10`;
  });
  const approx = await sql.begin(async (tx) => {
    await tx`set local hnsw.ef_search = 40`;
    return tx`select id from memories order by embedding <=> ${e}::vector limit 10`;
  });
  const got = new Set(approx.map((r) => r.id));
  wanted += exact.length;
  found += exact.filter((r) => got.has(r.id)).length;
}
console.log(`${db}: recall@10 ${(found / wanted).toFixed(3)} over ${queries.length} queries`);
await sql.end();

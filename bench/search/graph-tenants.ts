/**
 * `orgmem graph-tenants` on a database that holds every tenant in the vector graph, as one from
 * before ORGMEM_GRAPH_FROM does: how long it takes, and what it gives the one large tenant whose
 * searches walk the graph (its walk's time and recall@10) and the index (its bytes), right after,
 * after a VACUUM, and after a REINDEX.
 *
 *   node --import tsx bench/search/dense-vectors.ts /path/to/locomo10.json --db orgmem_dense_100k --n 100000
 *   node --import tsx bench/search/graph-tenants.ts --source orgmem_dense_100k [--db orgmem_graph_tenants] [--tenants 200] [--large 20000]
 *
 * The database is a copy of the dense one (real model's vectors, its `dense_queries` as the
 * queries), its memories dealt out: the first `--large` in id order stay with the tenant, the
 * rest go to `--tenants` small tenants in turn; every tenant marked ready and every row graphed,
 * then the halfvec graph built over all of them by `orgmem vector-storage`. The walk is the
 * service's unfiltered vector search of the large tenant (k 20, ef_search 100), 100 queries.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { graphSearch } from '../../src/ports/db/vector-storage.ts';
import { at } from '../lib/server.ts';
import { percentile, round } from '../lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    source: { type: 'string', default: 'orgmem_dense_100k' },
    db: { type: 'string', default: 'orgmem_graph_tenants' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    tenants: { type: 'string', default: '200' },
    large: { type: 'string', default: '20000' },
  },
});
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const K = 20;
const EF = 100;
const STORAGE = 'halfvec';

const admin = postgres(args.base!, { max: 1, onnotice: () => {} });
await admin.unsafe(`drop database if exists ${args.db} with (force)`);
await admin.unsafe(`create database ${args.db} template ${args.source}`);
await admin.end();
const url = at(args.base!, args.db!);
const sql = postgres(url, { max: 1, onnotice: () => {} });
const env = { ...process.env, DATABASE_URL: url, ORGMEM_EMBEDDER: 'hash', ORGMEM_LOG_LEVEL: 'warn', ORGMEM_VECTOR_STORAGE: STORAGE };
const orgmem = (...command: string[]) => {
  const started = performance.now();
  const out = execFileSync(process.execPath, ['bin/orgmem.js', ...command], { env, encoding: 'utf8' });
  process.stdout.write(out);
  return round((performance.now() - started) / 1000);
};

try {
  const [{ large }] = await sql<[{ large: string }]>`select tenant_id as large from memories limit 1`;
  const small = Number(args.tenants);
  log(`dealing ${args.source}'s memories: ${args.large} to one tenant, the rest to ${small}`);
  await sql.begin(async (tx) => {
    await tx`insert into tenants (id, name, email)
      select gen_random_uuid(), 'small ' || i, 'small' || i || '@example.com' from generate_series(1, ${small}) i`;
    await tx`insert into collections (tenant_id, name) select id, 'main' from tenants where name like 'small %'`;
    await tx`with dealt as (
        select m.id, row_number() over (order by m.id) as n from memories m where m.tenant_id = ${large})
      update memories m set tenant_id = s.id
        from dealt d join (select id, row_number() over (order by id) - 1 as k from tenants where name like 'small %') s
          on s.k = (d.n - 1) % ${small}
       where m.tenant_id = ${large} and m.id = d.id and d.n > ${Number(args.large)}`;
    await tx`update collections c set memory_count = (select count(*) from memories m where m.tenant_id = c.tenant_id and m.collection = c.name)`;
    // As a database from before ORGMEM_GRAPH_FROM: every tenant in the graph.
    await tx`insert into graph_tenants (tenant_id, state) select id, 'ready' from tenants on conflict (tenant_id) do update set state = 'ready'`;
    await tx`update memories set graphed = true where not graphed`;
  });
  log(`building the ${STORAGE} graph over every memory`);
  orgmem('vector-storage');
  await sql`vacuum analyze memories`;

  const queries = (await sql<Array<{ v: string }>>`select v::text as v from dense_queries order by i limit 100`).map((r) => r.v);
  const exact = await Promise.all(
    queries.map(async (v) =>
      sql.begin(async (tx) => {
        await tx.unsafe('set local enable_indexscan = off; set local enable_bitmapscan = off');
        const rows = await tx.unsafe<Array<{ id: string }>>(`select id from memories where tenant_id = $2 order by embedding <=> $1::vector limit 10`, [
          v,
          large,
        ]);
        return new Set(rows.map((r) => r.id));
      }),
    ),
  );
  const statement = graphSearch(STORAGE, 512, { columns: 'm.id', q: '$1::vector', where: 'm.tenant_id = $2 and m.graphed', k: K, candidates: K });
  const walk = async () => {
    const ms: number[] = [];
    let found = 0;
    for (const [i, v] of queries.entries()) {
      const t0 = performance.now();
      const rows = await sql.begin(async (tx) => {
        await tx.unsafe(`set local plan_cache_mode = force_custom_plan; set local hnsw.iterative_scan = relaxed_order; set local hnsw.ef_search = ${EF}`);
        return tx.unsafe<Array<{ id: string; distance: number }>>(statement, [v, large]);
      });
      ms.push(performance.now() - t0);
      found += rows
        .sort((a, b) => a.distance - b.distance)
        .slice(0, 10)
        .filter((r) => exact[i]!.has(r.id)).length;
    }
    const [{ bytes }] = await sql<[{ bytes: number }]>`select pg_relation_size('memories_embedding')::float8 as bytes`;
    return {
      walk_ms_p50: round(percentile(ms, 50)),
      walk_ms_p95: round(percentile(ms, 95)),
      recall_at_10: round(found / (10 * queries.length), 3),
      index_mb: round(bytes / 2 ** 20),
    };
  };
  // Once unmeasured: the pages in memory, as for every row after.
  await walk();
  log(`every tenant in the graph: ${JSON.stringify(await walk())}`);
  const command = orgmem('graph-tenants');
  log(`orgmem graph-tenants took ${command} s: ${JSON.stringify(await walk())}`);
  let started = performance.now();
  await sql`vacuum memories`;
  log(`after VACUUM memories (${round((performance.now() - started) / 1000)} s): ${JSON.stringify(await walk())}`);
  started = performance.now();
  await sql`reindex index concurrently memories_embedding`;
  log(`after REINDEX INDEX CONCURRENTLY (${round((performance.now() - started) / 1000)} s): ${JSON.stringify(await walk())}`);
} finally {
  await sql.end();
}

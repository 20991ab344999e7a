/**
 * Vector storage on a loaded benchmark database (bench/search/run.ts --keep): for each storage
 * in turn, `orgmem vector-storage` applies it (its estimate and its actual time recorded), then
 * the table and index bytes per memory, recall@10 of the service's graph search against an exact
 * scan, the graph search's time, and the cost of inserting rows into the graph.
 *
 *   node --import tsx bench/search/vector-storage.ts --db orgmem_vectors_1m [--queries 100]
 *        [--storages vector,binary-vector,halfvec,binary-halfvec:24:96] [--factors 4,16,50] [--inserts 2000] [--ef 100]
 *        [--query-table dense_queries] [--data-dir DIR]
 *
 * With `--data-dir DIR` it measures the embedded database (PGlite) instead: DIR, when it does
 * not exist, is first made a copy of `--db`'s tenant (its rows and float32 vectors, no vector
 * index), and the queries are still read from `--db`. The insert CPU is then this process's own
 * (PGlite runs in it) rather than a PostgreSQL backend's.
 *
 * A storage may name its graph's m and ef_construction after it (`vector:16:64`), applied as
 * ORGMEM_VECTOR_M and ORGMEM_VECTOR_EF_CONSTRUCTION; without them, the storage's defaults.
 *
 * Queries are the search benchmark's questions through the hash embedder (or, with --query-table,
 * the vectors of a table such as dense-vectors.ts's `dense_queries`), searched in `main`
 * as the service's vector mode does for limit 10 (k = 20 candidates, ef_search 100 (or each of --ef) or the
 * candidates if more; the ten best compared). The exact answer is computed once, on the loaded
 * float32 vectors, so the recall of halfvec includes what the 16-bit floats lose. Many memories
 * share the very same vector under the hash embedder, so a neighbour counts as found when its
 * exact distance is no farther than the exact tenth (hnsw-recall.ts). Inserts: copies of stored
 * rows with noise, one connection, rolled back (wall and backend CPU time). Results: bench/results/vector-storage-<db>.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { loadConfig, type VectorStorage } from '../../src/core/config.ts';
import { toVectorLiteral, type Db } from '../../src/ports/db/db.ts';
import { openPglite } from '../../src/ports/db/pglite.ts';
import { openPostgres } from '../../src/ports/db/postgres.ts';
import { graphParams, graphSearch, isBinary } from '../../src/ports/db/vector-storage.ts';
import { hashEmbedder } from '../../src/ports/embedder/hash.ts';
import { round } from '../lib/stats.ts';
import { queries } from './corpus.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    queries: { type: 'string', default: '100' },
    storages: { type: 'string', default: 'vector,binary-vector,halfvec,binary-halfvec' },
    factors: { type: 'string', default: '4,16,50' },
    inserts: { type: 'string', default: '2000' },
    // ef_search values tried for each storage and factor; the service's is 100 (or the candidates if more).
    ef: { type: 'string', default: '100' },
    // The queries' vectors from this table's column `v` (bench/search/dense-vectors.ts writes dense_queries) instead of the hash embedder's.
    'query-table': { type: 'string' },
    'data-dir': { type: 'string' },
  },
});
const url = new URL(args.base!);
url.pathname = `/${args.db}`;
const dbUrl = url.toString();
// The source: the loaded database, and the queries' table.
const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const K = 20;
const TIES = 300;
const dataDir = args['data-dir'];
// The database measured, and how the orgmem command reaches it.
const target = dataDir ? { ORGMEM_DATA_DIR: dataDir } : { DATABASE_URL: dbUrl };
if (dataDir && !existsSync(dataDir)) await copyToEmbedded(dataDir);
const open = (): Promise<Db> => (dataDir ? openPglite(dataDir) : Promise.resolve(openPostgres(dbUrl, 1)));
let db = await open();

const { dim, type } = (
  await db.query<{ dim: number; type: string }>(`select atttypmod as dim, atttypid::regtype::text as type from pg_attribute
  where attrelid = 'memories'::regclass and attname = 'embedding'`)
)[0]!;
// The exact answer is the float32 vectors' own: a database loaded as halfvec (the default) has lost them.
if (type !== 'vector')
  throw new Error(`memories.embedding is ${type}: load the database with ORGMEM_VECTOR_STORAGE=vector (the exact answer needs the float32 vectors)`);
const { tenant } = (await db.query<{ tenant: string }>(`select tenant_id as tenant from memories where collection = 'main' limit 1`))[0]!;
const vectors = args['query-table']
  ? (await sql<Array<{ v: string }>>`select v::text as v from ${sql(args['query-table'])} order by i limit ${Number(args.queries)}`).map((r) => r.v)
  : (await hashEmbedder(dim).embed(queries(Number(args.queries), 7))).map(toVectorLiteral);
const loadavg = () => execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');

// Plans are made per execution (postgres.js prepares statements, and a generic plan keeps
// whatever index it chose); the settings are local to each query's transaction.
const run = <T extends object>(settings: string, statement: string, params: unknown[]) =>
  db.transaction(async (tx) => {
    await tx.exec(`set local plan_cache_mode = force_custom_plan; ${settings}`);
    return tx.query<T>(statement, params);
  });

log(`exact answers for ${vectors.length} queries (load ${loadavg()})`);
const truth: Array<{ tenth: number; within: Set<string>; overflow: boolean }> = [];
for (const v of vectors) {
  const rows = await run<{ id: string; d: number }>(
    'set local enable_indexscan = off; set local enable_bitmapscan = off',
    `select id, embedding <=> $1::vector as d from memories where tenant_id = $2 and collection = 'main' order by 2 limit ${TIES}`,
    [v, tenant],
  );
  const tenth = rows[9]!.d + 1e-6;
  truth.push({ tenth, within: new Set(rows.filter((r) => r.d <= tenth).map((r) => r.id)), overflow: rows.at(-1)!.d <= tenth });
}
log(`queries whose ties at the tenth exceed ${TIES}: ${truth.filter((t) => t.overflow).length}`);

const fresh = Number(args.inserts);
await db.exec(`drop table if exists vector_storage_fresh`);
await db.exec(`create table vector_storage_fresh as select tenant_id, collection, text,
    embedding::vector + (select array_agg(random() * 0.06 - 0.03) from generate_series(1, ${dim}) where m.id is not null)::vector as embedding
  from memories m where collection = 'main' limit ${fresh}`);

const results: Record<string, unknown> = {
  database: args.db,
  ...(dataDir && { embedded: dataDir }),
  at: new Date().toISOString(),
  queries: vectors.length,
  query_vectors: args['query-table'] ?? 'hash embedder',
  k: K,
  storages: [] as unknown[],
};
// The rest of an insert, on a database whose vector index was dropped before the run (dropped during the load, it loads faster).
if (!(await db.query(`select 1 from pg_class where relname = 'memories_embedding'`)).length) {
  results.without_index = { inserts: await inserts() };
  log(`without a vector index: ${JSON.stringify(results.without_index)}`);
}
const service = loadConfig({}).search;
for (const item of args.storages!.split(',')) {
  const [storage, m, efConstruction] = item.split(':') as [VectorStorage, string?, string?];
  const graph = graphParams({ storage, m: m ? Number(m) : undefined, efConstruction: efConstruction ? Number(efConstruction) : undefined });
  log(`applying ${storage}, m ${graph.m}, ef_construction ${graph.efConstruction} (load ${loadavg()})`);
  const started = performance.now();
  // PGlite's data directory is one process's at a time: the command's, then this one's again.
  if (dataDir) await db.close();
  const out = execFileSync(process.execPath, ['bin/orgmem.js', 'vector-storage'], {
    env: {
      ...process.env,
      ...target,
      ORGMEM_EMBEDDER: 'hash',
      ORGMEM_LOG_LEVEL: 'warn',
      ORGMEM_VECTOR_STORAGE: storage,
      ORGMEM_VECTOR_M: String(graph.m),
      ORGMEM_VECTOR_EF_CONSTRUCTION: String(graph.efConstruction),
    },
    encoding: 'utf8',
  });
  const applySeconds = round((performance.now() - started) / 1000);
  if (dataDir) db = await open();
  process.stdout.write(out);
  const estimate = [...out.matchAll(/about (\d+) (s|min)/g)].reduce((s, m) => s + Number(m[1]) * (m[2] === 'min' ? 60 : 1), 0);
  await db.exec(`vacuum analyze memories`);
  const row: Record<string, unknown> = { storage, graph, apply: { estimate_s: estimate, actual_s: applySeconds, load: loadavg() }, bytes: await bytes() };
  const factors = isBinary(storage) ? args.factors!.split(',').map(Number) : [1];
  row.recall = [];
  for (const factor of factors) {
    for (const ef of args.ef!.split(',').map(Number)) {
      const r = await recall(storage, factor, false, ef);
      (row.recall as unknown[]).push(r);
      log(`${item}${isBinary(storage) ? ` x${factor}${factor === service.rerank ? ' (the default)' : ''}` : ''}: ${JSON.stringify(r)}`);
    }
  }
  // The column alone, index off: what the stored precision loses before the graph does.
  if (storage !== 'vector') row.exact_on_column = await recall(storage, 1, true);
  log(`${item}, exact on the column: ${JSON.stringify(row.exact_on_column ?? null)}`);
  row.inserts = await inserts();
  log(`${item}: ${JSON.stringify(row.bytes)} ${JSON.stringify(row.inserts)}`);
  (results.storages as unknown[]).push(row);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/vector-storage-${dataDir ? 'embedded-' : ''}${args.db}.json`, JSON.stringify(results, null, 2));
}
await db.exec(`drop table vector_storage_fresh`);
await db.close();
await sql.end();

async function bytes() {
  const [r] = await db.query<Record<string, number>>(`select count(*)::float8 as memories,
      pg_table_size('memories')::float8 as table_bytes, pg_indexes_size('memories')::float8 as indexes_bytes,
      pg_relation_size('memories_embedding')::float8 as vector_index_bytes from memories`);
  const n = r!.memories!;
  return {
    memories: n,
    table_per_memory: Math.round(r!.table_bytes! / n),
    vector_index_per_memory: Math.round(r!.vector_index_bytes! / n),
    other_indexes_per_memory: Math.round((r!.indexes_bytes! - r!.vector_index_bytes!) / n),
    total_per_memory: Math.round((r!.table_bytes! + r!.indexes_bytes!) / n),
  };
}

async function recall(storage: VectorStorage, factor: number, exact = false, efSearch = service.efSearch) {
  const candidates = isBinary(storage) && !exact ? K * factor : K;
  const ef = Math.max(efSearch, candidates);
  const where = `m.tenant_id = $2 and m.collection = 'main'`;
  const statement = exact
    ? `select m.id, m.embedding <=> $1::vector as distance from memories m where ${where} order by 2 limit ${K}`
    : // the graph is partial on `graphed` (sql/039): the walk must say so to be served by it
      graphSearch(storage, dim, { columns: 'm.id', q: '$1::vector', where: `${where} and m.graphed`, k: K, candidates });
  const settings = exact
    ? 'set local enable_indexscan = off; set local enable_bitmapscan = off'
    : `set local hnsw.iterative_scan = relaxed_order; set local hnsw.ef_search = ${ef}`;
  let found = 0;
  const ms: number[] = [];
  for (const [i, v] of vectors.entries()) {
    const t0 = performance.now();
    const rows = await run<{ id: string; distance: number }>(settings, statement, [v, tenant]);
    ms.push(performance.now() - t0);
    // relaxed_order may return neighbours slightly out of order: the service sorts them (candidates.ts).
    found += rows
      .sort((a, b) => a.distance - b.distance)
      .slice(0, 10)
      .filter((r) => truth[i]!.within.has(r.id)).length;
  }
  ms.sort((a, b) => a - b);
  return {
    candidates,
    ef_search: ef,
    recall_at_10: round(found / (10 * vectors.length), 3),
    ms_p50: round(ms[Math.floor(ms.length / 2)]!),
    ms_p95: round(ms[Math.floor(ms.length * 0.95)]!),
    load: loadavg(),
  };
}

/**
 * Microseconds per row to insert the fresh rows in one statement, rolled back: the wall time and
 * the CPU time of what ran it (from /proc: the PostgreSQL backend, a process on this machine; on
 * PGlite this process), which the other work on a loaded machine disturbs much less.
 */
async function inserts() {
  const cpu = (pid: number | 'self') => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  let cpuSeconds = 0;
  const started = performance.now();
  await db
    .transaction(async (tx) => {
      const pid = dataDir ? 'self' : (await tx.query<{ pid: number }>(`select pg_backend_pid() as pid`))[0]!.pid;
      const before = cpu(pid);
      await tx.exec(`insert into memories (tenant_id, id, collection, text, embedding)
        select tenant_id, gen_random_uuid(), collection, text, embedding from vector_storage_fresh`);
      cpuSeconds = cpu(pid) - before;
      throw new Error('rollback');
    })
    .catch((err: Error) => {
      if (err.message !== 'rollback') throw err;
    });
  return {
    rows: fresh,
    us_per_row: Math.round(((performance.now() - started) * 1000) / fresh),
    backend_cpu_us_per_row: Math.round((cpuSeconds * 1e6) / fresh),
    load: loadavg(),
  };
}

/**
 * A PGlite data directory holding the source's tenant as the source holds it: made by
 * `orgmem migrate` with float32 vectors, its vector index dropped (the first storage applied
 * builds it, as on the source), then the tenant's rows copied a thousand at a time.
 */
async function copyToEmbedded(dir: string) {
  log(`copying ${args.db} into ${dir}`);
  execFileSync(process.execPath, ['bin/orgmem.js', 'migrate'], {
    env: { ...process.env, ORGMEM_DATA_DIR: dir, ORGMEM_EMBEDDER: 'hash', ORGMEM_LOG_LEVEL: 'warn', ORGMEM_VECTOR_STORAGE: 'vector' },
    stdio: 'inherit',
  });
  const to = await openPglite(dir);
  try {
    await to.exec(`drop index if exists memories_embedding`);
    const [{ id }] = (await sql`select tenant_id as id from memories where collection = 'main' limit 1`) as unknown as [{ id: string }];
    // Generated columns (memories.tsv) are made again, not copied.
    const copy = async (table: string, rows: unknown[]) => {
      const columns = (
        await to.query<{ c: string }>(
          `select string_agg(quote_ident(column_name), ', ') as c from information_schema.columns where table_name = $1 and is_generated = 'NEVER'`,
          [table],
        )
      )[0]!.c;
      await to.query(`insert into ${table} (${columns}) select ${columns} from jsonb_populate_recordset(null::${table}, $1::jsonb)`, [JSON.stringify(rows)]);
    };
    for (const table of ['tenants', 'collections', 'graph_tenants']) {
      const rows = await sql.unsafe(`select to_jsonb(t) as r from ${table} t where ${table === 'tenants' ? 'id' : 'tenant_id'} = $1`, [id]);
      await copy(
        table,
        rows.map((x) => x.r),
      );
    }
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await sql<
        Array<{ id: string; r: unknown }>
      >`select id, to_jsonb(m) as r from memories m where tenant_id = ${id} and id > ${after} order by id limit 1000`;
      if (!rows.length) break;
      await copy(
        'memories',
        rows.map((x) => x.r),
      );
      after = rows.at(-1)!.id;
    }
    await to.exec(`vacuum analyze memories`);
  } finally {
    await to.close();
  }
  log(`copied`);
}

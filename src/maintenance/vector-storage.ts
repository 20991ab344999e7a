import type { Db, Queryable } from '../ports/db/db.ts';
import { isCitus } from './citus.ts';
import { columnType, type ColumnType, graphParams, indexBody, PGVECTOR_GRAPH, VECTOR_INDEX, type VectorIndex } from '../ports/db/vector-storage.ts';

type Storage = VectorIndex['storage'];
type Graph = ReturnType<typeof graphParams>;

/** The index being built while the old one still serves searches; renamed over it at the swap. */
const NEXT = `${VECTOR_INDEX}_next`;
/** The index's predicate: it holds the memories of the tenants in the graph (services/memory/graph-tenants.ts). */
const GRAPHED = 'graphed';
/** Rows copied to time the steps on this server before estimating them for the whole table. */
const SAMPLE = 3000;

/** The embedding kept in the row, as sql/007 keeps it (a new column or type takes its type's own storage). */
const KEEP_IN_ROW = 'alter column embedding set storage plain';
/** The column's new type, kept in the row. */
const retypeTo = (to: Storage, dim: number) => `alter column embedding type ${columnType(to)}(${dim})`;
const retype = (to: Storage, dim: number) => `${retypeTo(to, dim)}, ${KEEP_IN_ROW}`;

/**
 * Gives `memories` the embedding column `define` makes (run in `tx`), kept in the row as sql/007
 * keeps it: in one statement where the table is PostgreSQL's own. On Citus (docs/citus.md) the
 * table is distributed after the migrations: Citus carries the column's change to every shard
 * but refuses SET STORAGE, so the coordinator's table takes it alone (DDL propagation off for
 * that statement) and each shard once `tx` has committed (the shards' connections of
 * run_command_on_shards are not the transaction's, and would wait on its locks). Answers that
 * last step, to run after the commit; it throws naming a shard that refused.
 */
export async function retypeColumn(tx: Queryable, define: string): Promise<(db: Queryable) => Promise<void>> {
  const distributed = (await isCitus(tx)) && (await tx.query(`select 1 from pg_dist_partition where logicalrelid = 'memories'::regclass`)).length > 0;
  if (!distributed) {
    await tx.exec(`alter table memories ${define}, ${KEEP_IN_ROW}`);
    return async () => {};
  }
  await tx.exec(`alter table memories ${define}`);
  await tx.exec(`set local citus.enable_ddl_propagation to off`);
  await tx.exec(`alter table memories ${KEEP_IN_ROW}`);
  await tx.exec(`set local citus.enable_ddl_propagation to on`);
  return async (db) => {
    const failed = await db.query<{ shardid: string; result: string }>(
      `select shardid::text, result from run_command_on_shards('memories', $$alter table %s ${KEEP_IN_ROW}$$) where not success`,
    );
    if (failed.length) throw new Error(`Citus: shard ${failed[0]!.shardid} of memories kept its embedding's storage: ${failed[0]!.result}`);
  };
}

export interface StoragePlan {
  /** What the database holds now: null when the vector index is missing. */
  from: Storage | null;
  /** The graph's parameters now: null when the vector index is missing. */
  fromGraph: Graph | null;
  to: Storage;
  /** The graph's parameters it will be built with. */
  graph: Graph;
  dim: number;
  memories: number;
  /** Memories in the graph (`graphed`, sql/039): what the build indexes. */
  graphed: number;
  /** The column changes type: the table is rewritten under a lock (reads and writes wait). */
  rewrite: boolean;
  /** The index is built (concurrently while searches go on, then swapped in): a new storage, new graph parameters, or an index of every row made partial. */
  build: boolean;
  /** Estimated seconds of each step, from the sample timed on this server. */
  estimate: { rewrite_s: number; build_s: number };
}

/** A parameter of the index's definition (`WITH (m='12', ef_construction='32')`). */
const parameter = (def: string, name: string) => {
  const value = new RegExp(`[(,\\s]${name}\\s*=\\s*'?(\\d+)`).exec(def)?.[1];
  return value === undefined ? undefined : Number(value);
};

/** What the database holds: the column's type, the vector index's storage (null when it is missing), its graph's parameters and whether it is partial. */
export interface Held {
  storage: Storage | null;
  graph: Graph | null;
  partial: boolean;
  column: ColumnType;
  dim: number;
}

/** The storage the database holds: the column's type, the vector index's operator class and its graph's parameters. */
export async function currentStorage(db: Queryable): Promise<Held> {
  const [col] = await db.query<{ type: string; dim: number }>(
    `select t.typname as type, a.atttypmod as dim from pg_attribute a join pg_type t on t.oid = a.atttypid
      where a.attrelid = 'memories'::regclass and a.attname = 'embedding'`,
  );
  const column = col!.type as ColumnType;
  const [index] = await db.query<{ def: string }>(
    `select pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class c on c.oid = i.indexrelid
      where c.relname = $1 and i.indisvalid`,
    [VECTOR_INDEX],
  );
  const storage: Storage | null = !index ? null : index.def.includes('bit_hamming_ops') ? `binary-${column}` : column;
  const graph = index && {
    m: parameter(index.def, 'm') ?? PGVECTOR_GRAPH.m,
    efConstruction: parameter(index.def, 'ef_construction') ?? PGVECTOR_GRAPH.efConstruction,
  };
  return { storage, graph: graph || null, partial: !!index?.def.includes(` WHERE ${GRAPHED}`), column, dim: col!.dim };
}

/** Whether the database holds the configured storage and graph (then `orgmem vector-storage` has nothing to do). */
export function heldAsConfigured(held: Pick<Held, 'storage' | 'graph'>, index: VectorIndex): boolean {
  const want = graphParams(index);
  return held.storage === index.storage && held.graph?.m === want.m && held.graph.efConstruction === want.efConstruction;
}

/** A storage and its graph, as the service and `orgmem vector-storage` say them. */
export const described = (storage: Storage, g: Graph) => `${storage} (m ${g.m}, ef_construction ${g.efConstruction})`;

/**
 * What the service says at start when the database holds another storage than the configured one
 * (an existing database keeps its own until converted): searches are correct either way, only
 * a binary storage's walk needs its own index to be fast.
 */
export function storageMismatch(held: Held, index: VectorIndex): string | undefined {
  if (heldAsConfigured(held, index)) return undefined;
  const was = held.storage && held.graph ? described(held.storage, held.graph) : `${held.column} without a vector index`;
  return `The embeddings are stored as ${was}, not as configured, ${described(index.storage, graphParams(index))}: \`orgmem vector-storage\` converts them (docs/vectors.md).`;
}

/** The vector index as `index` says at `dim`: partial on the graphed rows, or (`partial` false) over every row. */
export const createIndexSql = (index: VectorIndex, dim: number, partial = true) =>
  `create index ${VECTOR_INDEX} on memories ${indexBody(index, dim)}${partial ? ` where ${GRAPHED}` : ''}`;

/**
 * A new database's storage, in the transaction that creates its tables: sql/ creates the column
 * as `vector` with the float graph's parameters, and an empty table converts at once. One
 * statement at a time, as migrations run on Citus (migrate.ts).
 */
export async function createStorage(tx: Queryable, index: VectorIndex, dim: number): Promise<void> {
  const held = await currentStorage(tx);
  if (heldAsConfigured(held, index)) return;
  const { column } = held;
  await tx.exec(`drop index ${VECTOR_INDEX}`);
  if (column !== columnType(index.storage)) await tx.exec(`alter table memories ${retype(index.storage, dim)}`);
  await tx.exec(createIndexSql(index, dim));
}

/**
 * What applying `to` does and how long it should take. The estimate times the same steps on a
 * sample of the table in a temporary copy (same columns and indexes), then scales by the row
 * count: linearly for the rewrite, by n log n for the HNSW build (each insertion walks a graph
 * whose depth grows with log n).
 */
export async function planStorage(db: Db, target: VectorIndex): Promise<StoragePlan> {
  const { storage: from, graph: fromGraph, partial, column, dim } = await currentStorage(db);
  const [{ n, graphed }] = (await db.query<{ n: number; graphed: number }>(
    `select count(*)::int as n, count(*) filter (where ${GRAPHED})::int as graphed from memories`,
  )) as [{ n: number; graphed: number }];
  const to = target.storage;
  const graph = graphParams(target);
  const rewrite = column !== columnType(to);
  const build = rewrite || !partial || !heldAsConfigured({ storage: from, graph: fromGraph }, target);
  const estimate = { rewrite_s: 0, build_s: 0 };
  if (build && graphed > 0) {
    await db.transaction(async (tx) => {
      await tx.exec(`create temporary table vector_storage_sample (like memories including defaults including generated including indexes) on commit drop`);
      // The copy's own HNSW indexes (a dead build's too) go: the steps below build theirs.
      const graphs = await tx.query<{ name: string }>(
        `select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam
          where i.indrelid = 'vector_storage_sample'::regclass and am.amname = 'hnsw'`,
      );
      for (const g of graphs) await tx.exec(`drop index ${g.name}`);
      const columns = (
        await tx.query<{ name: string }>(
          `select quote_ident(attname) as name from pg_attribute where attrelid = 'memories'::regclass and attnum > 0 and not attisdropped and attgenerated = ''`,
        )
      ).map((c) => c.name);
      await tx.exec(`insert into vector_storage_sample (${columns}) select ${columns} from memories limit ${SAMPLE}`);
      const [{ s }] = (await tx.query<{ s: number }>('select count(*)::int as s from vector_storage_sample')) as [{ s: number }];
      const timed = async (statement: string) => {
        const started = performance.now();
        await tx.exec(statement);
        return (performance.now() - started) / 1000;
      };
      if (rewrite) {
        estimate.rewrite_s = ((await timed(`alter table vector_storage_sample ${retype(to, dim)}`)) * n) / s;
      }
      const built = await timed(`create index on vector_storage_sample ${indexBody(target, dim)}`);
      // The sample's index holds every row copied, the build only the graphed ones.
      estimate.build_s = (built * graphed * Math.log(Math.max(graphed, 2))) / (s * Math.log(Math.max(s, 2)));
    });
  }
  return {
    from,
    fromGraph,
    to,
    graph,
    dim,
    memories: n,
    graphed,
    rewrite,
    build,
    estimate: { rewrite_s: Math.round(estimate.rewrite_s), build_s: Math.round(estimate.build_s) },
  };
}

/**
 * What the build reports while it runs (PostgreSQL's pg_stat_progress_create_index): the rows
 * done when it counts them, else the table's blocks read (an HNSW build reports those).
 */
export interface BuildProgress {
  phase: string;
  done: number;
  total: number;
  unit: 'rows' | 'blocks';
}

/**
 * Applies the plan. A new column type rewrites the table first, under a lock (the old index is
 * dropped with it: no operator class serves both types). Then the new index is built with
 * CREATE INDEX CONCURRENTLY while the old one (or, after a rewrite, exact scans) serves
 * searches, and swapped in under a brief lock. `progress` hears the build's phase every
 * `everyMs`. A build that died leaves an invalid `memories_embedding_next`, which the next run
 * drops first.
 */
export async function applyStorage(db: Db, plan: StoragePlan, progress: (p: BuildProgress, elapsedS: number) => void, everyMs = 10_000): Promise<void> {
  const concurrently = db.kind === 'postgres' ? 'concurrently' : '';
  await db.exec(`drop index ${concurrently} if exists ${NEXT}`);
  if (plan.rewrite) {
    const onShards = await db.transaction(async (tx) => {
      await tx.exec(`drop index if exists ${VECTOR_INDEX}`);
      return retypeColumn(tx, retypeTo(plan.to, plan.dim));
    });
    await onShards(db);
  }
  if (!plan.build) return;
  const started = performance.now();
  const poll =
    db.kind === 'postgres'
      ? setInterval(() => {
          db.query<BuildProgress>(
            `select p.phase, case when p.tuples_total > 0 then 'rows' else 'blocks' end as unit,
                    (case when p.tuples_total > 0 then p.tuples_done else p.blocks_done end)::float8 as done,
                    (case when p.tuples_total > 0 then p.tuples_total else p.blocks_total end)::float8 as total
               from pg_stat_progress_create_index p where p.relid = 'memories'::regclass`,
          ).then(
            ([p]) => p && progress(p, (performance.now() - started) / 1000),
            () => {},
          );
        }, everyMs)
      : undefined;
  try {
    await db.exec(`create index ${concurrently} ${NEXT} on memories ${indexBody({ storage: plan.to, ...plan.graph }, plan.dim)} where ${GRAPHED}`);
  } finally {
    clearInterval(poll);
  }
  await db.transaction(async (tx) => {
    await tx.exec(`drop index if exists ${VECTOR_INDEX}`);
    await tx.exec(`alter index ${NEXT} rename to ${VECTOR_INDEX}`);
  });
}

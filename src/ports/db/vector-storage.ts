import type { VectorStorage } from '../../core/config.ts';

/**
 * The one place that knows how memories' embeddings are stored and indexed (docs/vectors.md):
 * the column's type, the HNSW index's definition, and what a graph search orders by.
 *
 * - `vector`: 4 bytes a dimension, the graph over the column.
 * - `halfvec`: 2 bytes a dimension (16-bit floats), the graph over the column.
 * - `binary-halfvec`, `binary-vector`: the graph over one bit a dimension (the sign,
 *   `binary_quantize`) by Hamming distance, which only picks candidates: the column (halfvec or
 *   vector) ranks them exactly.
 *
 * Everything else reads the column whatever its type: query vectors stay `$n::vector`, and
 * pgvector casts a vector to halfvec implicitly, so `halfvec <=> vector` is halfvec's operator
 * (the one its index serves) and sums and averages of the two types are halfvec. Exact scans
 * need nothing from here.
 */

/** The HNSW index's name: search plans and `orgmem vector-storage` find it by it. */
export const VECTOR_INDEX = 'memories_embedding';

/** The embedding column's types. */
export type ColumnType = 'vector' | 'halfvec';

/** The column's type: what exact distances and re-ranks read. */
export const columnType = (storage: VectorStorage): ColumnType => (storage === 'vector' || storage === 'binary-vector' ? 'vector' : 'halfvec');

export const isBinary = (storage: VectorStorage) => storage.startsWith('binary-');

/** The binary code of an embedding expression, as the index holds it. */
const code = (expr: string, dim: number) => `binary_quantize(${expr})::bit(${dim})`;

/** pgvector's own build parameters: those of an index built without any. */
export const PGVECTOR_GRAPH = { m: 16, efConstruction: 64 };

/**
 * The graph's build parameters when the deployment sets none (ORGMEM_VECTOR_M,
 * ORGMEM_VECTOR_EF_CONSTRUCTION). The float graphs keep sql/006's, chosen for insert cost; a
 * Hamming distance over 64 bytes costs a fraction of a cosine over 512 floats, so the binary
 * graph affords pgvector's defaults. docs/vectors.md has what each finds and costs.
 */
const GRAPH_DEFAULTS = { float: { m: 12, efConstruction: 32 }, binary: PGVECTOR_GRAPH };

/** How the embeddings are stored and the graph over them built: the deployment's configuration. */
export interface VectorIndex {
  storage: VectorStorage;
  m?: number;
  efConstruction?: number;
}

/**
 * The graph's m and ef_construction: the configured ones, else the storage's defaults. pgvector
 * refuses an ef_construction under 2 x m, so one set alone moves the other's default with it
 * (the configuration refuses such a pair set together).
 */
export function graphParams(index: VectorIndex): { m: number; efConstruction: number } {
  const defaults = GRAPH_DEFAULTS[isBinary(index.storage) ? 'binary' : 'float'];
  const m = index.m ?? Math.min(defaults.m, Math.floor((index.efConstruction ?? Infinity) / 2));
  return { m, efConstruction: index.efConstruction ?? Math.max(defaults.efConstruction, 2 * m) };
}

/** The index's method, expression, operator class and parameters (what follows `on memories`). */
export function indexBody(index: VectorIndex, dim: number): string {
  const { m, efConstruction } = graphParams(index);
  const over = isBinary(index.storage) ? `(${code('embedding', dim)}) bit_hamming_ops` : `embedding ${columnType(index.storage)}_cosine_ops`;
  return `using hnsw (${over}) with (m = ${m}, ef_construction = ${efConstruction})`;
}

/**
 * How many rows the graph walk returns for `k` results. The binary graph only picks candidates
 * for the exact re-rank, `rerank` of them per result wanted (ORGMEM_VECTOR_RERANK): one bit a
 * dimension keeps the neighbourhood but not the order within it (bench/search/vector-storage.ts
 * measures recall by this factor; docs/vectors.md has the numbers). At most 1,000, the largest
 * hnsw.ef_search: past it the walk would go on as an iterative scan, at many times the cost.
 */
export const graphCandidates = (storage: VectorStorage, k: number, rerank: number) => (isBinary(storage) ? Math.max(k, Math.min(k * rerank, 1000)) : k);

/**
 * A graph search for the `k` nearest to `q` (SQL of a vector) among the rows `where` selects
 * from `memories m`, with `columns` (which may use `m.`) and `distance`, the exact cosine
 * distance: the index orders, and for binary storage the column re-ranks its `candidates`
 * (graphCandidates).
 */
export function graphSearch(storage: VectorStorage, dim: number, s: { columns: string; q: string; where: string; k: number; candidates: number }): string {
  const distance = `m.embedding <=> ${s.q}`;
  if (!isBinary(storage)) return `select ${s.columns}, ${distance} as distance from memories m where ${s.where} order by ${distance} limit ${s.k}`;
  const walk = `select ${s.columns}, ${distance} as distance from memories m where ${s.where}
    order by ${code('m.embedding', dim)} <~> ${code(s.q, dim)} limit ${s.candidates}`;
  return `select * from (${walk}) c order by distance limit ${s.k}`;
}

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

/** The column's type: what exact distances and re-ranks read. */
export const columnType = (storage: VectorStorage): 'vector' | 'halfvec' => (storage === 'vector' || storage === 'binary-vector' ? 'vector' : 'halfvec');

export const isBinary = (storage: VectorStorage) => storage.startsWith('binary-');

/** The binary code of an embedding expression, as the index holds it. */
const code = (expr: string, dim: number) => `binary_quantize(${expr})::bit(${dim})`;

/**
 * The index's method, expression, operator class and parameters (what follows `on memories`).
 * A Hamming distance over 64 bytes costs a fraction of a cosine over 512 floats, so the binary
 * graph affords pgvector's default build parameters; the float graphs keep sql/006's.
 */
export const indexBody = (storage: VectorStorage, dim: number) =>
  isBinary(storage)
    ? `using hnsw ((${code('embedding', dim)}) bit_hamming_ops) with (m = 16, ef_construction = 64)`
    : `using hnsw (embedding ${columnType(storage)}_cosine_ops) with (m = 12, ef_construction = 32)`;

/**
 * Candidates the binary graph hands to the exact re-rank per result wanted: one bit a dimension
 * keeps the neighbourhood but not the order within it (bench/search/vector-storage.ts measures
 * recall by this factor; docs/vectors.md has the numbers).
 */
export const RERANK_FACTOR = 4;

/** How many rows the graph walk returns for `k` results. */
export const graphCandidates = (storage: VectorStorage, k: number) => (isBinary(storage) ? k * RERANK_FACTOR : k);

/**
 * A graph search for the `k` nearest to `q` (SQL of a vector) among the rows `where` selects
 * from `memories m`, with `columns` (which may use `m.`) and `distance`, the exact cosine
 * distance: the index orders, and for binary storage the column re-ranks its candidates
 * (`candidates` of them; graphCandidates unless a benchmark tries another number).
 */
export function graphSearch(storage: VectorStorage, dim: number, s: { columns: string; q: string; where: string; k: number; candidates?: number }): string {
  const distance = `m.embedding <=> ${s.q}`;
  if (!isBinary(storage)) return `select ${s.columns}, ${distance} as distance from memories m where ${s.where} order by ${distance} limit ${s.k}`;
  const walk = `select ${s.columns}, ${distance} as distance from memories m where ${s.where}
    order by ${code('m.embedding', dim)} <~> ${code(s.q, dim)} limit ${s.candidates ?? graphCandidates(storage, s.k)}`;
  return `select * from (${walk}) c order by distance limit ${s.k}`;
}

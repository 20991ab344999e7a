import type { App } from '../../core/context.ts';
import type { Db } from '../../ports/db/db.ts';
import { graphCandidates } from '../../ports/db/vector-storage.ts';
import { isBroad } from './cache.ts';
import { narrows, type Filters, type Scope } from './scope.ts';

/**
 * Exact read or indexes: the cost model (docs/search.md). A search either reads every memory its scope
 * and filters select, once, and ranks both sides from that read (scan.ts), or walks the HNSW
 * graph and the full-text index. The read costs per row; the walk costs a fixed amount (the graph
 * at ef_search, the full-text side) plus, when the scope is a small share of the table, the extra
 * graph visits: the graph holds every graphed tenant's memories, so finding k of the scope's visits
 * about k x graph / scope of them, each a graph step and a heap visit to check the scope. A tenant
 * not in the graph (memory/graph-tenants.ts) always reads exactly.
 *
 *   exact(n) = ROW_US x n
 *   index(n) = INDEX_US + VISIT_US x (ef - EF) + VISIT_US x max(0, k x graph / n - ef)
 *
 * The exact read is taken up to the n where the two meet, so no scope is slower than a larger
 * one (the fixed threshold of 20,000 read a 10k collection row by row: hybrid 27 to 32 ms there
 * against 8.9 ms at 100k). With a filter, n is not known before reading: the read stops at that
 * n plus one and the filter is then remembered as broad (cache.ts).
 *
 * Constants: `bench/search/exact-cost.ts`, the same searches forced exact and forced through the
 * indexes, search_ms p50 in the service, per database kind (bench/README.md has the runs,
 * docs/search.md the table):
 * - ROW_US: the exact time over the collection's size (PostgreSQL: at 20k and 100k, 2026-11-25;
 *   PGlite: at 10k, 2026-12-03, the bundled model's vectors).
 * - INDEX_US: the index path on the same collections with a walk of EF.
 * - VISIT_US: what each visit more costs a walk. PostgreSQL: a 2,000-memory collection of a 108k
 *   table through the float graph (about 1,080 visits) against `main` (about EF): 42 us; the
 *   binary graph's walk of 1,000 at 1M cost 46 us a candidate more than the float graph's of 100
 *   (docs/vectors.md). A graph of 100k walks cheaper (16 to 21 us on a quiet machine); 42 keeps
 *   the cost of the large graphs, where a walk costs the most. PGlite: the binary graph's walk of 1,000 against 100
 *   (ORGMEM_VECTOR_RERANK 50 and 5) in a 12k table, 20 to 25 us.
 * An exact read on PGlite (WebAssembly, one process) costs two to three times PostgreSQL's a
 * row while a graph step costs about half: with PostgreSQL's constants the embedded default's
 * 10k collections were read exactly, three times slower than their walk.
 */
/** hybrid: both sides from one read (two passes with feedback) against the graph and the full-text index; single: one side alone (the vector side, or the text side of a filtered search). */
export type CostProfile = 'hybrid' | 'single';
const CONSTANTS: Record<Db['kind'], { profiles: Record<CostProfile, { ROW_US: number; INDEX_US: number }>; VISIT_US: number }> = {
  postgres: {
    profiles: { hybrid: { ROW_US: 4.5, INDEX_US: 15_000 }, single: { ROW_US: 3, INDEX_US: 5_000 } },
    VISIT_US: 42,
  },
  pglite: {
    profiles: { hybrid: { ROW_US: 10, INDEX_US: 16_000 }, single: { ROW_US: 6, INDEX_US: 6_500 } },
    VISIT_US: 22,
  },
};
/** hnsw.ef_search at which INDEX_US was measured (the default of ORGMEM_VECTOR_EF_SEARCH). */
const EF = 100;

/**
 * hnsw.ef_search of a graph search for `k` results: the candidates it keeps while walking, at
 * least those it must return (graphCandidates: k, or for a binary storage the re-rank's) or it
 * could not return that many. Without a filter ORGMEM_VECTOR_EF_SEARCH (100: recall@10 at 1M is
 * 0.947 against 0.912 at 40, pgvector's default, for about 2 ms more at p95). Under a filter (an
 * iterative scan, which keeps walking until k rows pass) 40: 100 made the 2% filter's p95 10 ms
 * slower. At most 1,000, pgvector's largest. docs/search.md and docs/vectors.md have the numbers.
 */
export const walkEf = (app: App, filtered: boolean, k: number) =>
  Math.min(1000, Math.max(filtered ? 40 : app.config.search.efSearch, graphCandidates(app.vectorStorage, k, app.config.search.rerank)));

/**
 * The most memories worth reading row by row for a search of `k` candidates per side, from the
 * model above; ORGMEM_SEARCH_EXACT_MAX, when set, instead. Unbounded for a tenant not in the graph.
 */
export function exactMax(app: App, scope: Scope, k: number, profile: CostProfile): number {
  if (scope.graphRows === null) return Infinity;
  const fixed = app.config.search.exactScanMax;
  if (fixed !== undefined) return fixed;
  const { profiles, VISIT_US } = CONSTANTS[app.db.kind];
  const { ROW_US, INDEX_US } = profiles[profile];
  const table = Math.max(scope.graphRows, scope.memoryCount);
  const ef = walkEf(app, false, k);
  const walk = INDEX_US + VISIT_US * (ef - EF);
  // Where exact(n) = index(n): without extra visits n = walk / ROW_US; with them the
  // positive root of ROW_US n^2 - (walk - VISIT_US ef) n - VISIT_US k table = 0.
  const flat = walk / ROW_US;
  const b = walk - VISIT_US * ef;
  const steep = (b + Math.sqrt(b * b + 4 * ROW_US * VISIT_US * k * table)) / (2 * ROW_US);
  return Math.floor(Math.max(flat, steep));
}

/** Whether the scope and filters select few enough memories to read them all (scan.ts), unless already found broad. */
export const readsExactly = (app: App, scope: Scope, filters: Filters, k: number, profile: CostProfile) =>
  scope.memoryCount <= exactMax(app, scope, k, profile) || (narrows(filters) && !isBroad(app, scope, filters));

/** How many rows an exact read may take: unbounded when the whole scope is within the bound. */
export function exactBound(app: App, scope: Scope, k: number, profile: CostProfile): number | undefined {
  const max = exactMax(app, scope, k, profile);
  return scope.memoryCount > max ? max : undefined;
}

import type { App } from '../../core/context.ts';
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
 * Constants: `bench/search/exact-cost.ts` on databases loaded by `bench/search/run.ts` (a
 * collection `main` of 10k, 20k and 100k memories and four of 2,000 in the same table), the same
 * searches forced exact and forced through the indexes, search_ms p50 in the service
 * (2026-11-25, PostgreSQL 15, 2 cores shared with other work: load average 6 to 9, so every
 * figure is pessimistic, by about the same factor on both sides). ROW_US: the slope of the exact
 * times over the collection sizes at 20k and 100k (hybrid 4.6 and 4.5 us a memory, two passes;
 * vector 2.9 and 3.1). INDEX_US: the index path on `main` at 20k and 100k (hybrid 13.4 and 19.7
 * ms; vector 4.3 and 7.0). VISIT_US: vector search through the graph on a 2,000-memory
 * collection of the 108k table (about 1,080 visits) took 48.7 ms against 7.0 ms for `main`
 * (about EF visits): 42 us a visit. A walk that keeps more candidates than EF (the deployment's
 * ORGMEM_VECTOR_EF_SEARCH, or a binary storage's re-rank: walkEf) costs as many more visits: the
 * binary graph's walk at 1,000 took 46 ms at 1M against 4.3 for the float graph's at 100
 * (docs/vectors.md), 46 us for each candidate more. docs/search.md has the table.
 */
const PROFILES = {
  /** Both sides from one read (two passes with feedback) against the graph and the full-text index. */
  hybrid: { ROW_US: 4.5, INDEX_US: 15_000 },
  /** One side: the vector side (or the text side of a filtered search) alone. */
  single: { ROW_US: 3, INDEX_US: 5_000 },
};
const VISIT_US = 42;
/** hnsw.ef_search at which INDEX_US was measured (the default of ORGMEM_VECTOR_EF_SEARCH). */
const EF = 100;

export type CostProfile = keyof typeof PROFILES;

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
  const { ROW_US, INDEX_US } = PROFILES[profile];
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

import type { SearchInput } from '../../schemas/search.ts';
import { currentSql, facetsSql, validAtSql } from '../memory/memory-view.ts';

/** The collections a search reads, all of one tenant (already checked against grants). */
export interface Scope {
  tenantId: string;
  collections: string[];
  /** Memories in those collections, all states: below the candidate count no index can come back short. */
  memoryCount: number;
  /** Memories in the table, every tenant's (the planner's estimate). */
  tableRows: number;
  /**
   * Memories in the vector graph, every graphed tenant's (the planner's estimate): a walk steps
   * over them all (exact-cost.ts). Null while the tenant is not in the graph (memory/graph-tenants.ts):
   * its searches read exactly.
   */
  graphRows: number | null;
}

export type Filters = Pick<
  SearchInput,
  'category' | 'metadata_filter' | 'container_tag' | 'include_archived' | 'as_of' | 'observed_after' | 'observed_before' | 'trust'
>;
export const NO_FILTERS: Filters = {
  category: null,
  metadata_filter: null,
  container_tag: null,
  include_archived: false,
  as_of: null,
  observed_after: null,
  observed_before: null,
  trust: null,
};

/** Whether a filter (beyond currentness and archiving) narrows the scope's memories. */
export const narrows = (f: Filters) =>
  f.category !== null || f.container_tag !== null || f.metadata_filter !== null || f.observed_after !== null || f.observed_before !== null || f.trust !== null;

/**
 * Several filters, or a metadata filter, as one containment test on the facets index (migrations
 * 008 and 037 say why): the keys memory_facets() gives a memory under its tenant's id, only those
 * the request sets. Containment nests, so {"m": filter} is contained exactly when the memory's
 * metadata contains the filter. A category or a container tag alone uses its own index, which
 * leads with the tenant too; an index of the metadata column alone was the whole table's (at 1M
 * one tenant's two-key filter visited 3,935 rows to keep 362: 182 ms cold, 2.9 through the facets).
 */
const facets = (f: Filters) => ({
  ...(f.category !== null ? { c: f.category } : {}),
  ...(f.container_tag !== null ? { t: f.container_tag } : {}),
  ...(f.metadata_filter !== null ? { m: f.metadata_filter } : {}),
});

/**
 * The WHERE clause shared by both candidate queries: scope, currentness and the request's
 * filters. Filters sit inside each candidate query (not after a top-k cut), so a filtered
 * search finds its matches however rare they are. `params` receives the values.
 */
export function where(
  scope: Pick<Scope, 'tenantId' | 'collections'>,
  filters: Filters,
  params: unknown[],
  opts: { excludeId?: string; anyState?: boolean },
): string {
  const p = (v: unknown) => `$${params.push(v)}`;
  const conds = [`m.tenant_id = ${p(scope.tenantId)}`];
  conds.push(scope.collections.length === 1 ? `m.collection = ${p(scope.collections[0])}` : `m.collection = any(${p(scope.collections)}::text[])`);
  // Current facts by default; as of a moment, those valid then (docs/time.md).
  if (!opts.anyState) conds.push(filters.as_of === null ? currentSql('m') : validAtSql('m', p(filters.as_of)));
  if (filters.observed_after !== null) conds.push(`m.observed_at >= ${p(filters.observed_after)}::timestamptz`);
  if (filters.observed_before !== null) conds.push(`m.observed_at < ${p(filters.observed_before)}::timestamptz`);
  if (!opts.anyState && !filters.include_archived) conds.push('not m.archived');
  if (filters.trust !== null) conds.push(`m.trust = any(${p(filters.trust)}::text[])`);
  const set = Object.keys(facets(filters)).length;
  if (set > 1 || filters.metadata_filter !== null) {
    conds.push(`${facetsSql('m')} @> ${p({ [scope.tenantId]: facets(filters) })}::jsonb`);
  } else if (filters.category !== null) conds.push(`m.category = ${p(filters.category)}`);
  else if (filters.container_tag !== null) conds.push(`m.container_tag = ${p(filters.container_tag)}`);
  if (opts.excludeId) conds.push(`m.id <> ${p(opts.excludeId)}`);
  return conds.join(' and ');
}

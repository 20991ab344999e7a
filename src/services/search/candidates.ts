import type { Db, Queryable } from '../../ports/db/db.ts';
import type { SearchInput } from './schemas.ts';

/** The collections a search reads, all of one tenant (already checked against grants). */
export interface Scope {
  tenantId: string;
  collections: string[];
  /** Memories in those collections, all states: below the candidate count no index can come back short. */
  memoryCount: number;
}

export type Filters = Pick<SearchInput, 'category' | 'metadata_filter' | 'container_tag' | 'include_archived'>;
export const NO_FILTERS: Filters = { category: null, metadata_filter: null, container_tag: null, include_archived: false };

export interface CandidateRow {
  id: string;
  collection: string;
  text: string;
  category: string;
  importance: number;
  source: string;
  metadata: Record<string, unknown>;
  images: Array<{ key?: string } & Record<string, unknown>>;
  created_at: Date;
  expires_at: Date | null;
  /** Cosine similarity to the query (vector side) or normalised BM25 (text side), 0 to 1. */
  score: number;
}

export const COLUMNS = `m.id, m.collection, m.text, m.category, m.importance, m.source, m.metadata, m.images, m.created_at, m.expires_at`;

/** Superseded and expired memories never appear in search (api.md section 3). */
const CURRENT = `m.superseded_by is null and m.expired_at is null and (m.expires_at is null or m.expires_at > now())`;

/**
 * The WHERE clause shared by both candidate queries: scope, currentness and the request's
 * filters. Filters sit inside each candidate query (not after a top-k cut), so a filtered
 * search finds its matches however rare they are. `params` receives the values.
 */
export function where(scope: Scope, filters: Filters, params: unknown[], opts: { excludeId?: string; anyState?: boolean }): string {
  const p = (v: unknown) => `$${params.push(v)}`;
  const conds = [`m.tenant_id = ${p(scope.tenantId)}`];
  conds.push(scope.collections.length === 1 ? `m.collection = ${p(scope.collections[0])}` : `m.collection = any(${p(scope.collections)}::text[])`);
  if (!opts.anyState) conds.push(CURRENT);
  if (!opts.anyState && !filters.include_archived) conds.push('not m.archived');
  if (filters.category !== null) conds.push(`m.category = ${p(filters.category)}`);
  if (filters.container_tag !== null) conds.push(`m.container_tag = ${p(filters.container_tag)}`);
  if (filters.metadata_filter !== null) conds.push(`m.metadata @> ${p(filters.metadata_filter)}::jsonb`);
  if (opts.excludeId) conds.push(`m.id <> ${p(opts.excludeId)}`);
  return conds.join(' and ');
}

/**
 * Per-transaction planner settings. Custom plans always: whether the HNSW index or a filter
 * index is the better path depends on how many rows the tenant, collection and filters select,
 * which a generic plan of the prepared statement cannot know. Iterative index scans (pgvector
 * 0.8) keep the HNSW scan going until enough rows pass the filters; ef_search is at least the
 * number of candidates wanted, or the index could not return that many.
 */
async function plannerSettings(tx: Queryable, efSearch: number): Promise<void> {
  await tx.query(
    `select set_config('plan_cache_mode', 'force_custom_plan', true),
            set_config('hnsw.ef_search', $1, true),
            set_config('hnsw.iterative_scan', 'relaxed_order', true)`,
    [String(Math.min(1000, Math.max(40, efSearch)))],
  );
}

export interface VectorOptions {
  excludeId?: string;
  /** Score against this vector instead of the one searched with (hybrid feedback searches near, scores against the query). */
  scoreAgainst?: string;
  /** Every memory whatever its state (forget erases archived and superseded copies too). */
  anyState?: boolean;
}

/** The `k` memories nearest to `vector` (pgvector text form) by cosine distance. */
export async function vectorCandidates(db: Db, scope: Scope, filters: Filters, vector: string, k: number, opts: VectorOptions = {}): Promise<CandidateRow[]> {
  const query = (exact: boolean) => {
    const params: unknown[] = [vector, opts.scoreAgainst ?? vector];
    const cond = where(scope, filters, params, opts);
    // "+ 0" turns the ORDER BY into an expression the HNSW index cannot serve: an exact scan.
    const order = exact ? '(m.embedding <=> $1::vector) + 0' : 'm.embedding <=> $1::vector';
    return {
      sql: `select ${COLUMNS}, 1 - (m.embedding <=> $2::vector) as score, m.embedding <=> $1::vector as distance
              from memories m where ${cond} order by ${order} limit ${Number(k)}`,
      params,
    };
  };
  return db.transaction(async (tx) => {
    await plannerSettings(tx, k);
    const approx = query(false);
    let rows = await tx.query<CandidateRow & { distance: number }>(approx.sql, approx.params);
    // An approximate scan stops after hnsw.max_scan_tuples; a rare filter can leave it short
    // although matches exist. Then the filter indexes find the few matching rows exactly.
    if (rows.length < k && scope.memoryCount > k) {
      const exact = query(true);
      rows = await tx.query<CandidateRow & { distance: number }>(exact.sql, exact.params);
    }
    // relaxed_order may return neighbours slightly out of order.
    return rows.sort((a, b) => a.distance - b.distance).map(({ distance: _d, ...row }) => clampScore(row));
  });
}

export const clampScore = (r: CandidateRow): CandidateRow => ({ ...r, score: Math.min(1, Math.max(0, Number(r.score))) });

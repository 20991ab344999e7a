import type { App } from '../../context.ts';
import type { Queryable } from '../../ports/db/db.ts';
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

/** Whether a filter (beyond currentness and archiving) narrows the scope's memories. */
export const narrows = (f: Filters) => f.category !== null || f.container_tag !== null || f.metadata_filter !== null;

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

/**
 * The `k` memories nearest to `vector` (pgvector text form) by cosine distance.
 *
 * Exact first when the scope and filters select few memories: the HNSW graph is shared by every
 * tenant and collection, so for a small collection or a rare filter an approximate scan visits
 * mostly other rows before it finds k of its own (each visited row costs a graph step, about
 * 24 µs at 1M; a filter that is rare near the query, like a category the query is not about,
 * made one scan visit 76k rows), while an exact scan reads only the matching rows through the
 * btree and GIN indexes (about 3 µs each). The exact scan reads at most `exactScanMax` matching
 * rows; when more match, the approximate scan answers instead.
 */
export async function vectorCandidates(app: App, scope: Scope, filters: Filters, vector: string, k: number, opts: VectorOptions = {}): Promise<CandidateRow[]> {
  const max = app.config.search.exactScanMax;
  type Row = CandidateRow & { distance: number; matched?: number };
  const run = (tx: Queryable, path: 'exact' | 'approximate', readAtMost?: number) => {
    const params: unknown[] = [vector];
    // The score is 1 - distance unless it is taken against another vector: only then is a second
    // distance computed per row (the exact scan reads up to exactScanMax rows).
    const score = opts.scoreAgainst ? `, 1 - (m.embedding <=> $${params.push(opts.scoreAgainst)}::vector) as score` : '';
    const cond = where(scope, filters, params, opts);
    const select = `select ${COLUMNS}${score}, m.embedding <=> $1::vector as distance from memories m where ${cond}`;
    const sql =
      path === 'approximate'
        ? `${select} order by m.embedding <=> $1::vector limit ${Number(k)}`
        : // An ORDER BY over a subquery is one the HNSW index cannot serve: an exact scan. The
          // window count sees every row the inner scan read, before the outer LIMIT.
          `select *, count(*) over () as matched from (${select}${readAtMost ? ` limit ${readAtMost}` : ''}) s order by distance limit ${Number(k)}`;
    return tx.query<Row>(sql, params);
  };
  return app.db.transaction(async (tx) => {
    await plannerSettings(tx, k);
    let rows = scope.memoryCount <= max || narrows(filters) ? await run(tx, 'exact', max + 1) : undefined;
    if (!rows || Number(rows[0]?.matched ?? 0) > max) {
      rows = await run(tx, 'approximate');
      // The approximate scan stops after hnsw.max_scan_tuples, so a filter rare near the query
      // can leave it short although matches exist: then every match is ranked exactly.
      if (rows.length < k) rows = await run(tx, 'exact');
    }
    // relaxed_order may return neighbours slightly out of order.
    return rows
      .sort((a, b) => a.distance - b.distance)
      .map(({ distance, matched: _m, ...row }) => clampScore({ ...row, score: opts.scoreAgainst ? row.score : 1 - Number(distance) }));
  });
}

export const clampScore = (r: CandidateRow): CandidateRow => ({ ...r, score: Math.min(1, Math.max(0, Number(r.score))) });

import type { App } from '../../context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { isBroad, markBroad } from './cache.ts';
import { scanExact } from './scan.ts';
import { narrows, where, type Filters, type Scope } from './scope.ts';

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

const COLUMNS = `m.id, m.collection, m.text, m.category, m.importance, m.source, m.metadata, m.images, m.created_at, m.expires_at`;

/**
 * Per-transaction planner settings. Custom plans always: whether the HNSW index or a filter
 * index is the better path depends on how many rows the tenant, collection and filters select,
 * which a generic plan of the prepared statement cannot know.
 */
export async function plannerSettings(tx: Queryable): Promise<void> {
  await tx.query(`select set_config('plan_cache_mode', 'force_custom_plan', true)`);
}

/**
 * hnsw.ef_search of a graph search: the candidates it keeps while walking, at least the `k`
 * wanted or it could not return that many. Without a filter 100: recall@10 at 1M is 0.947
 * against 0.912 at 40 (pgvector's default), for about 2 ms more at p95. Under a filter (an
 * iterative scan, which keeps walking until k rows pass) 40: 100 made the 2% filter's p95 10 ms
 * slower. docs/search.md has the numbers.
 */
const efSearch = (filtered: boolean, k: number) => String(Math.min(1000, Math.max(filtered ? 40 : 100, k)));

/**
 * The memories behind lists of scored ids, each list in the order given with its scores (ids no
 * longer there are dropped): the scans keep only ids, and one query loads the rows kept.
 */
export async function loadRows(db: Queryable, scope: Scope, lists: Array<Array<{ id: string; score: number }>>): Promise<CandidateRow[][]> {
  const ids = [...new Set(lists.flat().map((s) => s.id))];
  if (!ids.length) return lists.map(() => []);
  const rows = await db.query<CandidateRow>(`select ${COLUMNS} from memories m where m.tenant_id = $1 and m.id = any($2::uuid[])`, [scope.tenantId, ids]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return lists.map((list) => list.flatMap((s) => (byId.has(s.id) ? [clampScore({ ...byId.get(s.id)!, score: s.score })] : [])));
}

export interface VectorOptions {
  excludeId?: string;
  /** Score against this vector instead of the one searched with (hybrid feedback searches near, scores against the query). */
  scoreAgainst?: string;
  /** Every memory whatever its state (forget erases archived and superseded copies too). */
  anyState?: boolean;
}

/** Whether the scope and filters select few enough memories to read them all (scan.ts), unless already found broad. */
export const readsExactly = (app: App, scope: Scope, filters: Filters) =>
  scope.memoryCount <= app.config.search.exactScanMax || (narrows(filters) && !isBroad(app, scope, filters));

/** How many rows an exact read may take: unbounded when the whole scope is within the bound. */
export const exactBound = (app: App, scope: Scope) =>
  scope.memoryCount > app.config.search.exactScanMax ? app.config.search.exactScanMax : undefined;

/**
 * The `k` memories nearest to `vector` (pgvector text form) by cosine distance.
 *
 * Exact first when the scope and filters select few memories (scan.ts says why); when more
 * match than the exact bound, the HNSW index answers instead.
 */
export async function vectorCandidates(app: App, scope: Scope, filters: Filters, vector: string, k: number, opts: VectorOptions = {}): Promise<CandidateRow[]> {
  const scored = await app.db.transaction(async (tx) => {
    await plannerSettings(tx);
    if (readsExactly(app, scope, filters)) {
      const scan = await scanExact(tx, scope, filters, { ...opts, vector, k, bound: exactBound(app, scope) });
      if (!scan.broad) return scan.nearest;
      markBroad(app, scope, filters);
    }
    // The graph answers: the order must come from the HNSW index. Left to itself the planner may
    // sort a broad filter's rows instead, since it cannot estimate a jsonb containment (it took
    // 20k rows for 100 and spent 35 ms where the graph took 9). Iterative scans (pgvector 0.8)
    // keep walking until enough rows pass the filters.
    await tx.query(
      `select set_config('enable_sort', 'off', true), set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true)`,
      [efSearch(narrows(filters), k)],
    );
    const params: unknown[] = [vector];
    const score = opts.scoreAgainst ? `1 - (m.embedding <=> $${params.push(opts.scoreAgainst)}::vector)` : '1 - (m.embedding <=> $1::vector)';
    const rows = await tx.query<{ id: string; score: number; distance: number }>(
      `select m.id, ${score} as score, m.embedding <=> $1::vector as distance from memories m
        where ${where(scope, filters, params, opts)} order by m.embedding <=> $1::vector limit ${Number(k)}`,
      params,
    );
    // The approximate scan stops after hnsw.max_scan_tuples, so a filter rare near the query
    // can leave it short although matches exist: then every match is ranked exactly.
    if (rows.length < k) {
      await tx.query(`select set_config('enable_sort', 'on', true)`);
      return (await scanExact(tx, scope, filters, { ...opts, vector, k })).nearest;
    }
    // relaxed_order may return neighbours slightly out of order.
    return rows.sort((a, b) => a.distance - b.distance);
  });
  const [rows] = await loadRows(app.db, scope, [scored]);
  return rows!;
}

export const clampScore = (r: CandidateRow): CandidateRow => ({ ...r, score: Math.min(1, Math.max(0, Number(r.score))) });

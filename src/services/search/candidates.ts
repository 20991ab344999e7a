import type { App } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Quarantine, TrustClass } from '../../schemas/trust.ts';
import { graphCandidates, graphSearch } from '../../ports/db/vector-storage.ts';
import { markBroad } from './cache.ts';
import { exactBound, readsExactly, walkEf } from './exact-cost.ts';
import { sameDaySql, vectorSql, type SearchVector } from './feedback.ts';
import { graphSettings, graphSettingsFilter } from './plan-settings.ts';
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
  observed_at: Date;
  valid_from: Date;
  valid_to: Date | null;
  trust: TrustClass;
  quarantine: Quarantine | null;
  /** Cosine similarity to the query (vector side) or normalised BM25 (text side), 0 to 1. */
  score: number;
}

/** A search result's columns, of a memory aliased `m`. */
export const COLUMNS = `m.id, m.collection, m.text, m.category, m.importance, m.source, m.metadata, m.images, m.created_at, m.observed_at, m.valid_from,
  m.valid_to, m.trust, m.quarantine`;

/**
 * The memories behind lists of scored ids, each list in the order given with its scores (ids no
 * longer there are dropped): the scans keep only ids, and one query loads the rows kept.
 */
export async function loadRows(db: Queryable, scope: Scope, lists: Array<Array<{ id: string; score: number }>>): Promise<CandidateRow[][]> {
  const ids = [...new Set(lists.flat().map((s) => s.id))];
  if (!ids.length) return lists.map(() => []);
  const rows = await db.query<CandidateRow>(`select ${COLUMNS} from memories m where m.tenant_id = $1 and m.id = any($2::uuid[])`, [scope.tenantId, ids]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return lists.map((list) => list.flatMap((s) => (byId.has(s.id) ? [scored(byId.get(s.id)!, s.score)] : [])));
}

export interface VectorOptions {
  excludeId?: string;
  /** Score against this vector instead of the one searched with (hybrid feedback searches near, scores against the query). */
  scoreAgainst?: string;
  /** Every memory whatever its state (forget erases archived and superseded copies too). */
  anyState?: boolean;
}

/**
 * The `k` memories nearest to `vector` by cosine distance, rows loaded.
 *
 * Exact first when the scope and filters select few memories (scan.ts says why): one statement,
 * then one to load the rows kept. When more match than the exact bound, the HNSW index answers
 * (graphNearest).
 */
export async function vectorCandidates(
  app: App,
  scope: Scope,
  filters: Filters,
  vector: SearchVector,
  k: number,
  opts: VectorOptions = {},
): Promise<CandidateRow[]> {
  if (readsExactly(app, scope, filters, k, 'single')) {
    const scan = await scanExact(app.db, scope, filters, { ...opts, vector, k, bound: exactBound(app, scope, k, 'single') });
    if (!scan.broad) return (await loadRows(app.db, scope, [scan.nearest]))[0]!;
    markBroad(app, scope, filters);
  }
  return graphNearest(app, scope, filters, vector, k, opts);
}

/**
 * The graph answers: the order must come from the HNSW index, and the rows come with the search,
 * since the walk visits each heap row anyway. Iterative scans (pgvector 0.8) keep walking until
 * enough rows pass the filters. Without a filter, one statement carries its settings
 * (plan-settings.ts). Under a filter the planner may sort the filter's rows instead, since it
 * cannot estimate a jsonb containment (it took 20k rows for 100 and spent 35 ms where the graph
 * took 9), so `enable_sort` is off, which only a setting made before planning can do:
 * graphSettings and the search go in one flight, in a transaction that scopes them (three round
 * trips: BEGIN, both statements, COMMIT).
 */
async function graphNearest(app: App, scope: Scope, filters: Filters, vector: SearchVector, k: number, opts: VectorOptions): Promise<CandidateRow[]> {
  const params: unknown[] = [];
  const p = (v: unknown) => `$${params.push(v)}`;
  const q = vectorSql(vector, scope, p);
  const score = opts.scoreAgainst ? `1 - (m.embedding <=> ${p(opts.scoreAgainst)}::vector)` : `1 - (m.embedding <=> ${q})`;
  const storage = app.vectorStorage;
  const candidates = graphCandidates(storage, Number(k), app.config.search.rerank);
  const ef = String(walkEf(app, narrows(filters), Number(k)));
  // `m.graphed`: the index is partial on it (memory/graph-tenants.ts); every row of a tenant searched here has it.
  const inGraph = `${where(scope, filters, params, opts)} and m.graphed`;
  const cond = narrows(filters) ? inGraph : `${inGraph} and ${graphSettingsFilter(`${p(ef)}::text`)}`;
  const columns = `${COLUMNS}, ${score} as score, ${sameDaySql(vector, scope, p)}::float8 as pull`;
  const search = graphSearch(storage, app.embedder.dimensions, { columns, q, where: cond, k: Number(k), candidates });
  // relaxed_order may return neighbours slightly out of order. The graph gives the nearest k;
  // among them the feedback search counts the best matches' days nearer (feedback.ts), as the
  // exact scan does over all memories in scope.
  type Row = CandidateRow & { distance: number; pull: number };
  const ordered = (rows: Row[]) => rows.sort((a, b) => a.distance - a.pull - (b.distance - b.pull)).map((row) => scored(row, row.score));
  // The approximate scan stops after hnsw.max_scan_tuples, so a filter rare near the query (or
  // a scope whose memories are mostly archived or superseded) can leave it short although
  // matches exist: then every match is ranked exactly.
  if (!narrows(filters)) {
    const rows = await app.db.query<Row>(search, params);
    if (rows.length === k) return ordered(rows);
    return (await loadRows(app.db, scope, [(await scanExact(app.db, scope, filters, { ...opts, vector, k })).nearest]))[0]!;
  }
  return app.db.transaction(async (tx) => {
    const [, rows] = await Promise.all([tx.exec(graphSettings(ef)), tx.query<Row>(search, params)]);
    if (rows.length < k) {
      const [, scan] = await Promise.all([tx.exec('set local enable_sort = on'), scanExact(tx, scope, filters, { ...opts, vector, k })]);
      return (await loadRows(tx, scope, [scan.nearest]))[0]!;
    }
    return ordered(rows);
  });
}

/**
 * A candidate with its score clamped to [0, 1], built field by field: spreading a driver's row
 * object was a third of the service's own CPU per search (bench/search/bare.ts, 100k).
 */
export const scored = (r: Omit<CandidateRow, 'score'>, score: number): CandidateRow => ({
  id: r.id,
  collection: r.collection,
  text: r.text,
  category: r.category,
  importance: r.importance,
  source: r.source,
  metadata: r.metadata,
  images: r.images,
  created_at: r.created_at,
  observed_at: r.observed_at,
  valid_from: r.valid_from,
  valid_to: r.valid_to,
  trust: r.trust,
  quarantine: r.quarantine,
  score: Math.min(1, Math.max(0, Number(score))),
});

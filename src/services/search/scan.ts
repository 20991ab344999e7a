import type { Queryable } from '../../ports/db/db.ts';
import type { Bm25Doc } from './bm25.ts';
import { sameDaySql, vectorSql, type SearchVector } from './feedback.ts';
import { where, type Filters, type Scope } from './scope.ts';

export interface ScanRequest {
  /** Rank the `k` nearest to this vector. */
  vector?: SearchVector;
  k?: number;
  /** Score against this vector (pgvector text form) instead of `vector` (hybrid feedback). */
  scoreAgainst?: string;
  /** Collect the newest `limit` full-text matches of an OR of these lexemes. */
  lexemes?: string[];
  limit?: number;
  /** Read at most this many matching memories, plus one to tell that there were more. */
  bound?: number;
  excludeId?: string;
  anyState?: boolean;
}

export interface Scan {
  /** Nearest first; score is the similarity to `scoreAgainst` or else to `vector`. */
  nearest: Array<{ id: string; score: number; distance: number }>;
  matches: Bm25Doc[];
  /** More memories matched the scope and filters than `bound`: the other fields are empty. */
  broad: boolean;
}

/**
 * Reads every memory the scope and filters select, once, and answers both sides of a search
 * from that one pass: the `k` nearest to a vector by exact distance, and the newest full-text
 * matches of the lexemes, each only if asked for.
 *
 * Why exact: the HNSW graph is shared by every tenant and collection, so for a small collection
 * or a filter an approximate scan visits mostly other rows before it finds k of its own (about
 * 24 µs per visited row at 1M; one 1% category the query was not about visited 76k rows), while
 * this pass reads only the matching rows through the filter indexes (about 2 µs each, distance
 * and word check included). Why one pass: reading a row is most of its cost, so ranking both
 * sides from one read costs little more than one side (1% of 1M: 21 ms against 17 + 19 ms).
 * Only the ids, distances and matched lexemes are kept; the callers load the few rows they keep.
 * One statement, no transaction: a read needs none, and its settings travel in it (plan-settings.ts).
 */
export async function scanExact(db: Queryable, scope: Scope, filters: Filters, req: ScanRequest): Promise<Scan> {
  const params: unknown[] = [];
  const p = (v: unknown) => `$${params.push(v)}`;
  const columns = ['m.id'];
  const parts = [`select 'n' as side, null::uuid as id, count(*)::float8 as distance, null::float8 as score, null::text[] as lexemes from f`];
  if (req.vector) {
    // The feedback search counts memories of the best matches' days nearer (feedback.ts).
    columns.push(`(m.embedding <=> ${vectorSql(req.vector, scope, p)}) - ${sameDaySql(req.vector, scope, p)} as distance`);
    const nearest = `(select id, distance from f order by distance limit ${Number(req.k)}) v`;
    // The score against another vector only for the k kept: a distance is most of what a row
    // costs to rank (on PGlite about 7 µs), so computing it for every row read cost as much again.
    parts.push(
      req.scoreAgainst
        ? `select 'v', v.id, v.distance, 1 - (s.embedding <=> ${p(req.scoreAgainst)}::vector), null from ${nearest}
             join memories s on s.tenant_id = ${p(scope.tenantId)} and s.id = v.id`
        : `select 'v', id, distance, null, null from ${nearest}`,
    );
  }
  if (req.lexemes?.length) {
    columns.push(`case when m.tsv @@ search_tsquery(${p(req.lexemes)}::text[])::tsquery then m.tsv end as tsv`);
    parts.push(
      `select 't', id, null, null, tsvector_to_array(tsv) from (select id, tsv from f where tsv is not null order by id desc limit ${Number(req.limit)}) t`,
    );
  }
  const cond = where(scope, filters, params, req);
  const limit = req.bound === undefined ? '' : ` limit ${req.bound + 1}`;
  const rows = await db.query<{ side: 'n' | 'v' | 't'; id: string; distance: number; score: number | null; lexemes: string[] }>(
    `with f as materialized (select ${columns.join(', ')} from memories m where ${cond}${limit}) ${parts.join(' union all ')}`,
    params,
  );
  const count = rows.find((r) => r.side === 'n')!.distance;
  if (req.bound !== undefined && count > req.bound) return { nearest: [], matches: [], broad: true };
  return {
    nearest: rows
      .filter((r) => r.side === 'v')
      .map((r) => ({ id: r.id, distance: r.distance, score: r.score ?? 1 - r.distance }))
      .sort((a, b) => a.distance - b.distance),
    matches: rows.filter((r) => r.side === 't').map((r) => ({ id: r.id, lexemes: r.lexemes })),
    broad: false,
  };
}

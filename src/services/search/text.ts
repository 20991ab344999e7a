import type { App } from '../../context.ts';
import type { Db } from '../../ports/db/db.ts';
import { rankBm25, type Bm25Doc } from './bm25.ts';
import { COLUMNS, narrows, where, type CandidateRow, type Filters, type Scope } from './candidates.ts';

/**
 * Finding `limit` matches of common words means reading about limit / (share of memories
 * matching) rows, up to 32k at 1M memories for a 1,000 cap (p95 35 ms); 250 brings it to 11 ms.
 * A scope this small is read whole in that time anyway, so it keeps the full cap.
 */
const LARGE_SCOPE = 10_000;
const SAMPLE = 250;

export type RankedMatch = Bm25Doc & { score: number };

export interface TextRanking {
  ranked: RankedMatch[];
  /** Every match was ranked (the cap was not reached): document frequencies are exact. */
  exhaustive: boolean;
}

/** The query's lexemes in the full-text configuration (stop words gone, stemmed), weight 1 each. */
export async function queryLexemes(db: Db, text: string): Promise<Map<string, number>> {
  const [row] = await db.query<{ lexemes: string[] }>('select search_lexemes($1) as lexemes', [text]);
  return new Map((row?.lexemes ?? []).map((l) => [l, 1]));
}

/**
 * Full-text matches of an OR of the weighted lexemes, ranked by BM25 (bm25.ts: PostgreSQL's
 * ts_rank has no notion of how rare a word is, so a speaker's name present in half the memories
 * would weigh as much as the one word that matters). Scope, currentness and filters sit in the
 * matching query itself.
 *
 * Ranking costs per matching row, and a query made of common words matches a large share of a
 * big collection, so at most `cap` matches are ranked, and in scopes of more than LARGE_SCOPE
 * memories at most SAMPLE: below that (rare words, ordinary collections) document frequencies
 * and ranking are exact; above it the text side ranks the newest matches (ids are time-ordered)
 * and the vector side carries the relevance (docs/search.md).
 */
export async function rankText(app: App, scope: Scope, filters: Filters, weights: Map<string, number>): Promise<TextRanking> {
  if (!weights.size) return { ranked: [], exhaustive: true }; // only stop words: nothing to match
  const { textRankCap: cap, exactScanMax: max } = app.config.search;
  const limit = scope.memoryCount > LARGE_SCOPE ? Math.min(cap, SAMPLE) : cap;
  const matches = await app.db.transaction(async (tx) => {
    const params: unknown[] = [[...weights.keys()]];
    const cond = where(scope, filters, params, {});
    const match = `tsv @@ search_tsquery($1::text[])::tsquery`;
    // Custom plans: a common word wants a scan that stops at the cap, a rare one the GIN index.
    await tx.query(`select set_config('plan_cache_mode', 'force_custom_plan', true)`);
    if (narrows(filters)) {
      // Filter first, as the vector side does: the filter's rows (at most `max`) are read through
      // its index and the words checked on each. Left to itself the planner intersects the
      // filter's index with the GIN index, whose common words list a sixth of a large collection
      // (162k entries for one query at 1M). A last row flags a filter too broad for this.
      const rows = await tx.query<Bm25Doc & { broad: boolean }>(
        `with f as materialized (select m.id, m.tsv from memories m where ${cond} limit ${max + 1})
         select id, tsvector_to_array(tsv) as lexemes, false as broad
           from (select id, tsv from f where ${match} order by id desc limit ${Number(limit)}) t
         union all select null, null, true where (select count(*) from f) > ${max}`,
        params,
      );
      if (!rows.some((r) => r.broad)) return rows.map(({ broad: _b, ...doc }) => doc);
    }
    return tx.query<Bm25Doc>(`select m.id, tsvector_to_array(m.tsv) as lexemes from memories m where ${cond} and m.${match} order by m.id desc limit ${Number(limit)}`, params);
  });
  return { ranked: rankBm25(matches, weights, scope.memoryCount), exhaustive: matches.length < limit };
}

/** Words of the best first-pass matches, added to the query with this weight (relative to 1). */
const EXPANSION_DOCS = 3;
const EXPANSION_WEIGHT = 0.3;
const MAX_LEXEMES = 64;

/**
 * Query expansion from pseudo-relevance feedback (RM3 in spirit): the lexemes of the best
 * first-pass matches join the query at a lower weight, so a second pass also finds memories that
 * answer the question in other words than it asks it. BM25's idf keeps the common ones weak.
 * Only after an exhaustive first pass: when the query's words were too common to rank every
 * match, its best matches are a sample's, and a second pass would double the cost for little.
 * Answers null when there is nothing to expand.
 */
export function expandQuery(weights: Map<string, number>, firstPass: TextRanking): Map<string, number> | null {
  if (!firstPass.exhaustive || !firstPass.ranked.length) return null;
  const expanded = new Map(weights);
  for (const doc of firstPass.ranked.slice(0, EXPANSION_DOCS)) {
    for (const l of doc.lexemes) if (expanded.size < MAX_LEXEMES && !expanded.has(l)) expanded.set(l, EXPANSION_WEIGHT);
  }
  return expanded;
}

/** The memories behind the best `k` ranked matches, in rank order, with their text scores. */
export async function loadMatches(db: Db, scope: Scope, ranked: RankedMatch[], k: number): Promise<CandidateRow[]> {
  const top = ranked.slice(0, k);
  if (!top.length) return [];
  const rows = await db.query<CandidateRow>(`select ${COLUMNS} from memories m where m.tenant_id = $1 and m.id = any($2::uuid[])`, [
    scope.tenantId,
    top.map((t) => t.id),
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return top.flatMap((t) => (byId.has(t.id) ? [{ ...byId.get(t.id)!, score: t.score }] : []));
}

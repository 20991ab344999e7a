import type { App } from '../../core/context.ts';
import type { Db } from '../../ports/db/db.ts';
import { rankBm25, type Bm25Doc } from './bm25.ts';
import { markBroad } from './cache.ts';
import { exactBound, exactMax, readsExactly } from './exact-cost.ts';
import { scanExact } from './scan.ts';
import { narrows, where, type Filters, type Scope } from './scope.ts';
import { wordShares } from './word-shares.ts';

/**
 * Finding `limit` matches of common words means reading about limit / (share of memories
 * matching) rows, up to 32k at 1M memories for a 1,000 cap (p95 35 ms); 250 brings it to 11 ms.
 * Ranking them costs per match too (their lexemes travel back and are ranked here), so a scope
 * of more memories than the cap, which may match more than SAMPLE, is sampled whatever its size:
 * with the full cap up to 10,000 memories, hybrid search of a 10k collection took 39 ms through
 * the indexes against 13 ms at 20k. A scope within the cap is ranked exactly.
 */
const SAMPLE = 250;
/** A broad filter's sample reads at most this many rows per match wanted (text.ts, rankText). */
const SAMPLE_READ = 16;
/**
 * A query word is rare when its matches are estimated at most the sample's size in scope and at
 * most this many in the whole table: every match of it in scope is then ranked beside the
 * sample, read through the GIN index (its list and the rows it names: the table's, since the
 * index is not by tenant, as many as the sample reads of a common word's). Without it a collection over the cap whose newest memories share the
 * query's common words ranked none of the older ones holding its rare words (a name, a place):
 * bench/README.md, "Length normalisation beside file chunks".
 */
const RARE_ROWS = 2000;

export type RankedMatch = Bm25Doc & { score: number };

export interface TextRanking {
  ranked: RankedMatch[];
  /** Every match was ranked (the cap was not reached): document frequencies are exact. */
  exhaustive: boolean;
}

/** The SQL of a query's lexemes in the full-text configuration (stop words gone, stemmed); `param` holds its text. */
export const lexemesSql = (param: string) => `(select search_lexemes(${param}::text))`;

/** Query lexemes weighing 1 each, the query's own words. */
export const lexemeWeights = (lexemes: string[]) => new Map(lexemes.map((l) => [l, 1]));

/** The lexemes of a query, on their own (a rewritten query; a plain one has them with its scope, search.ts). */
export async function queryLexemes(db: Db, text: string): Promise<Map<string, number>> {
  const [row] = await db.query<{ lexemes: string[] }>(`select ${lexemesSql('$1')} as lexemes`, [text]);
  return lexemeWeights(row?.lexemes ?? []);
}

/**
 * Full-text matches of an OR of the weighted lexemes, ranked by BM25 (bm25.ts: PostgreSQL's
 * ts_rank has no notion of how rare a word is, so a speaker's name present in half the memories
 * would weigh as much as the one word that matters). Scope, currentness and filters sit in the
 * matching query itself.
 *
 * Ranking costs per matching row, and a query made of common words matches a large share of a
 * big collection, so at most `cap` matches are ranked, and in scopes of more memories than the
 * cap at most SAMPLE: below that (rare words, small collections) document frequencies
 * and ranking are exact; above it the text side ranks the newest matches (ids are time-ordered)
 * and every match of the query's rare words (RARE_ROWS), or under a broad filter the first
 * matches its index gives, and the vector side carries the relevance (docs/search.md). `need`: the candidates the caller wants, when that many match.
 */
export async function rankText(app: App, scope: Scope, filters: Filters, weights: Map<string, number>, need: number): Promise<TextRanking> {
  if (!weights.size) return { ranked: [], exhaustive: true }; // only stop words: nothing to match
  const limit = textLimit(app, scope);
  const lexemes = [...weights.keys()];
  // One statement per step, no transaction (a read needs none): custom plans (plan-settings.ts),
  // since a common word wants a scan that stops at the limit and a rare one the GIN index.
  if (narrows(filters) && readsExactly(app, scope, filters, need, 'single')) {
    // Filter first, as the vector side does (scan.ts): left to itself the planner intersects
    // the filter's index with the GIN index, whose common words list a sixth of a large
    // collection (162k entries for one query at 1M). Without a filter the GIN index is best.
    // The read holds every row in scope: only ranking costs per match, so up to the cap.
    const cap = app.config.search.textRankCap;
    const scan = await scanExact(app.db, scope, filters, { lexemes, limit: cap, bound: exactBound(app, scope, need, 'single') });
    if (!scan.broad) return rankMatches(scan.matches, weights, scope, cap);
    markBroad(app, scope, filters);
  }
  const query = (sql: (cond: string, p: (v: unknown) => string) => string) => {
    const params: unknown[] = [lexemes];
    return app.db.query<Bm25Doc>(
      sql(`${where(scope, filters, params, {})}`, (v) => `$${params.push(v)}`),
      params,
    );
  };
  const match = `tsv @@ search_tsquery($1::text[])::tsquery`;
  if (narrows(filters)) {
    // A filter known to select more memories than the exact bound: the matches among its first
    // `read` rows are the sample, where the planner would AND the filter's index with the
    // words' GIN lists (30 to 56 ms for a 2% filter at 1M). Those rows are not all of the
    // filter's, so the sample is never exhaustive. Words too rare to fill a quarter of it, or
    // the `need`ed candidates, go to the GIN index, quick for rare words, which finds them all.
    const read = Math.min(SAMPLE_READ * limit, exactMax(app, scope, need, 'single'));
    const sample = await query(
      (cond) => `with f as materialized (select m.id, m.tsv from memories m where ${cond} limit ${read})
       select id, tsvector_to_array(tsv) as lexemes from f where ${match} limit ${Number(limit)}`,
    );
    if (sample.length >= Math.max(need, limit / 4)) return { ranked: rankBm25(sample, weights, scope.memoryCount), exhaustive: false };
  }
  const rare = await rareLexemes(app, scope, lexemes, limit);
  const matches = await query((cond, p) => {
    const newest = `select m.id, tsvector_to_array(m.tsv) as lexemes from memories m where ${cond} and m.${match} order by m.id desc limit ${Number(limit)}`;
    if (!rare.length) return newest;
    const cap = app.config.search.textRankCap;
    return `(${newest}) union (select m.id, tsvector_to_array(m.tsv) as lexemes from memories m
      where ${cond} and m.tsv @@ search_tsquery(${p(rare)}::text[])::tsquery limit ${Number(cap)})`;
  });
  return rankMatches(matches, weights, scope, limit);
}

/**
 * The query's rare lexemes (RARE_ROWS), when its matches are sampled (a scope over the cap):
 * none when every match is ranked anyway, or without the table's word statistics. A word's
 * share of the table stands for its share of the scope.
 */
async function rareLexemes(app: App, scope: Scope, lexemes: string[], limit: number): Promise<string[]> {
  if (scope.memoryCount <= app.config.search.textRankCap) return [];
  const stats = await wordShares(app);
  if (!stats) return [];
  return lexemes.filter((l) => {
    const share = stats.shares.get(l) ?? stats.floor;
    return share * scope.memoryCount <= limit && share * scope.tableRows <= RARE_ROWS;
  });
}

/**
 * How many matches the indexes give at most: SAMPLE in scopes of more memories than the cap,
 * else the cap (every match). An exact read ranks up to the cap whatever the scope's size: it
 * has read the rows already.
 */
export const textLimit = (app: App, scope: Scope) => {
  const cap = app.config.search.textRankCap;
  return scope.memoryCount > cap ? Math.min(cap, SAMPLE) : cap;
};

/** BM25 over the matches read, at most `limit`: fewer means every match was read. */
export const rankMatches = (matches: Bm25Doc[], weights: Map<string, number>, scope: Scope, limit: number): TextRanking => ({
  ranked: rankBm25(matches, weights, scope.memoryCount),
  exhaustive: matches.length < limit,
});

/**
 * The second pass's ranking, every match of the (exhaustive) first pass among it. The words the
 * feedback adds include common ones (the best matches' day, docs/time.md; their everyday
 * words), which can match more memories than a pass ranks; its sample of the newest must not
 * push out what the query's own words found.
 */
export function secondPassRanking(firstMatches: Bm25Doc[], second: TextRanking, expanded: Map<string, number>, scope: Scope): TextRanking {
  const ranked = new Set(second.ranked.map((d) => d.id));
  const missing = firstMatches.filter((d) => !ranked.has(d.id));
  if (!missing.length) return second;
  return { ranked: rankBm25([...second.ranked, ...missing], expanded, scope.memoryCount), exhaustive: second.exhaustive };
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

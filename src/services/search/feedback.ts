import type { Scope } from './scope.ts';

/** How many of the best full-text matches steer the vector query. */
export const FEEDBACK_DOCS = 3;

/**
 * How much nearer (in cosine distance) the feedback search counts a memory observed on the same
 * UTC day as one of the best matches. Chosen on LoCoMo's conversations 0 to 4 among 0.05, 0.1
 * and 0.2 (bench/README.md, "Session date as observed_at"): larger values lift more turns of the
 * session but push other sessions out of the first ten.
 */
export const SAME_DAY_PULL = 0.05;

/**
 * The vector a search walks from: a query vector (pgvector text form), plus, for the feedback
 * pass of hybrid search, the centroid of some memories' embeddings.
 */
export interface SearchVector {
  literal: string;
  feedbackIds?: string[];
}

/**
 * Pseudo-relevance feedback for the vector side of hybrid search (Rocchio on embeddings): the
 * query vector plus the centroid of the best full-text matches' embeddings. Small embedders
 * place a question far from the statement that answers it; the memories that share the
 * question's rare words sit in the right neighbourhood and pull the query there. The vector
 * side still scores every candidate by its similarity to the original query (and min_score
 * applies to that). On LoCoMo this lifts hybrid recall@5 from 46 to 57 (docs/search.md).
 */
export function feedbackVector(queryLiteral: string, textRows: Array<{ id: string }>): SearchVector {
  return { literal: queryLiteral, feedbackIds: textRows.slice(0, FEEDBACK_DOCS).map((r) => r.id) };
}

/**
 * The search vector as a SQL expression (`p` adds a parameter). The centroid is computed inside
 * the search statement instead of being read back first, which cost a round trip; with no
 * matches, or when they are gone, the query vector alone. The whole sum is one uncorrelated
 * subquery, which PostgreSQL runs once before the scan: with only the average inside it, the
 * addition and the coalesce ran again for every row an exact read ranks.
 */
export function vectorSql(v: SearchVector, scope: Scope, p: (value: unknown) => string): string {
  const query = `${p(v.literal)}::vector`;
  if (!v.feedbackIds?.length) return query;
  return `(select coalesce(${query} + avg(c.embedding), ${query}) ${fromFeedback(v, scope, p)})`;
}

const fromFeedback = (v: SearchVector, scope: Scope, p: (value: unknown) => string) =>
  `from memories c where c.tenant_id = ${p(scope.tenantId)} and c.id = any(${p(v.feedbackIds)}::uuid[])`;
const utcDay = (column: string) => `(${column} at time zone 'UTC')::date`;

/**
 * How much nearer memory `m` counts in the feedback search: SAME_DAY_PULL when it was observed
 * on the day of one of the best matches, else 0; '0' without feedback. The day is what a
 * conversation's turns, a meeting's notes or one day's mail share, and what a date written into
 * each memory's text used to give its embedding (docs/time.md, "Search"). Memories all observed
 * on one day (a bulk load without times) all get it, so their order does not change.
 */
export function sameDaySql(v: SearchVector, scope: Scope, p: (value: unknown) => string): string {
  if (!v.feedbackIds?.length) return '0';
  return `case when ${utcDay('m.observed_at')} in (select ${utcDay('c.observed_at')} ${fromFeedback(v, scope, p)}) then ${SAME_DAY_PULL} else 0 end`;
}

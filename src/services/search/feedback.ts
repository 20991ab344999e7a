import type { Scope } from './scope.ts';

/** How many of the best full-text matches steer the vector query. */
export const FEEDBACK_DOCS = 3;

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
 * the search statement (an uncorrelated subquery, which PostgreSQL runs once before the scan)
 * instead of being read back first, which cost a round trip; with no matches, or when they are
 * gone, the query vector alone.
 */
export function vectorSql(v: SearchVector, scope: Scope, p: (value: unknown) => string): string {
  const query = `${p(v.literal)}::vector`;
  if (!v.feedbackIds?.length) return query;
  const centroid = `(select avg(c.embedding) from memories c where c.tenant_id = ${p(scope.tenantId)} and c.id = any(${p(v.feedbackIds)}::uuid[]))`;
  return `coalesce(${query} + ${centroid}, ${query})`;
}

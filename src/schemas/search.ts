import { z } from 'zod';
import { category, instant, metadataObject, timestamp } from './fields.ts';
import { imageSchema, memoryTimes, provenance } from './memory.ts';
import { trustClass, trustFilter } from './trust.ts';

/** Request and response shapes of search, related and forget (docs/search.md). */
export const searchQuery = z.string().min(1).max(10_000).describe('What to look for, in natural language (1 to 10000 characters)');

/** The most places before and after a result that `neighbours` may ask for (50 results bring at most 500 neighbours). */
export const MAX_NEIGHBOURS = 5;

export const searchFields = {
  query: searchQuery,
  limit: z.number().int().min(1).max(50).default(5).describe('Results to return, 1 to 50'),
  min_score: z
    .number()
    .min(0)
    .max(1)
    .default(0.3)
    .describe(
      'Threshold on the cosine similarity between the query and a memory (0 to 1). In vector mode memories below it are ' +
        'left out; in hybrid mode vector candidates below it are left out while full-text matches still count; ignored in text mode.',
    ),
  mode: z
    .enum(['hybrid', 'vector', 'text'])
    .default('hybrid')
    .describe('hybrid: vector and full-text candidates fused by reciprocal rank; vector: embedding similarity only; text: full-text only'),
  category: category.nullable().default(null).describe('Only memories of this category'),
  metadata_filter: metadataObject.nullable().default(null).describe('Only memories whose metadata contains this object (JSONB containment, @>)'),
  container_tag: z.string().min(1).max(256).nullable().default(null).describe('Only memories with this container tag'),
  include_archived: z.boolean().default(false).describe('Also return archived memories'),
  trust: trustFilter,
  as_of: instant
    .nullable()
    .default(null)
    .describe(
      'Search what was valid at this moment (ISO 8601 with offset) instead of what is current: facts since superseded or ended are found inside ' +
        'their validity, a fact retracted as wrong never; what was recorded later is included (docs/time.md)',
    ),
  observed_after: instant.nullable().default(null).describe('Only memories observed (event time) at or after this moment'),
  observed_before: instant.nullable().default(null).describe('Only memories observed (event time) before this moment'),
  rewrite: z
    .boolean()
    .default(false)
    .describe(
      'Rewrite the query with the tenant LLM before retrieval, for both the vector and the text side (one LLM call). Without an LLM, over the spend cap or if the call fails, the plain query is used.',
    ),
  rerank: z
    .boolean()
    .default(false)
    .describe(
      'Re-rank the fused candidates with the tenant LLM (one LLM call, at most 50 candidates). Without an LLM, over the spend cap or if the call fails, the fused order is kept.',
    ),
  neighbours: z
    .number()
    .int()
    .min(0)
    .max(MAX_NEIGHBOURS)
    .default(0)
    .describe(
      `Also return, with each result, the memories up to this many places before and after it in its file (metadata key and chunk) ` +
        `or thread (metadata thread and seq), in its collection, 0 to ${MAX_NEIGHBOURS} (docs/search.md, "Neighbours")`,
    ),
};
const searchInput = z.object(searchFields);
export type SearchInput = z.output<typeof searchInput>;

const resultFields = z.object({
  id: z.string(),
  text: z.string(),
  category: z.string(),
  importance: z.number(),
  score: z
    .number()
    .min(0)
    .max(1)
    .describe(
      'Higher is better, 0 to 1: cosine similarity (vector), BM25 against a full match (text), or the reciprocal-rank fusion against rank 1 on both sides (hybrid: 1 is first for both vector and full-text, one side only is at most 0.5)',
    ),
  source: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  images: z.array(imageSchema),
  created_at: timestamp.describe('When the store recorded it'),
  ...memoryTimes,
  provenance,
  trust: trustClass,
  flagged: z.boolean().describe('Its text was taken for an instruction to an agent and the tenant flags such text instead of holding it (docs/trust.md)'),
  collection: z.string().optional().describe("The memory's collection (all-collection search only)"),
});

/** A memory next to a result in its file or thread (`neighbours`): a result's fields without the search's own. */
export const searchNeighbour = resultFields
  .omit({ score: true, collection: true })
  .extend({
    offset: z.number().int().describe("Its place relative to the result's in their file or thread: -1 the memory just before, 1 the one just after"),
  })
  .openapi('SearchNeighbour');
export type SearchNeighbour = z.infer<typeof searchNeighbour>;

export const searchResult = resultFields
  .extend({
    neighbours: z
      .array(searchNeighbour)
      .optional()
      .describe('With `neighbours` above 0 only: the memories next to it in its file or thread, in their order (by offset; empty when it has none)'),
  })
  .openapi('SearchResult');
export type SearchResult = z.infer<typeof searchResult>;

export const searchResponse = z
  .object({
    results: z.array(searchResult),
    query_embedding_ms: z.number().describe('Time spent embedding the query (0 when it came from the cache or was not needed)'),
    search_ms: z.number().describe('Time spent searching, fusing and loading the results'),
    cached: z.boolean().describe('true when an identical query was answered from the cache (nothing changed in the collections since)'),
  })
  .openapi('SearchResponse');
export type SearchResponse = z.infer<typeof searchResponse>;

export const relatedFields = {
  limit: z.coerce.number().int().min(1).max(50).default(5).describe('Results to return, 1 to 50'),
  min_score: z.coerce.number().min(0).max(1).default(0).describe('Minimum cosine similarity to the memory, 0 to 1'),
};

export const forgetFields = {
  query: searchQuery,
  min_score: z.number().min(0).max(1).default(0.5).describe('Only memories at least this similar to the query (cosine, 0 to 1) are deleted'),
  limit: z.number().int().min(1).max(100).default(10).describe('At most this many memories are deleted, the most similar first (1 to 100)'),
};

export const forgetResponse = z.object({ deleted: z.number().int(), ids: z.array(z.string()) }).openapi('ForgetResponse');

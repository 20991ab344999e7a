import { z } from 'zod';
import { collectionName, instant, tokenBudget } from './fields.ts';
import { proxyMessage } from './proxy.ts';
import { searchQuery } from './search.ts';
import { trustClass, trustFilter } from './trust.ts';

/** Request and answer of the context endpoint (docs/context.md). */

export const contextFields = {
  query: searchQuery.optional().describe('What the context is for, in natural language (1 to 10000 characters); or send messages'),
  messages: z
    .array(proxyMessage)
    .min(1)
    .max(1000)
    .optional()
    .describe('A conversation, as for OpenAI (1 to 1000 messages): its latest user message is the query; or send query'),
  max_tokens: tokenBudget.describe('The budget of the whole rendered block, counted with the o200k_base tokenizer (128 to 32000)'),
  limit: z.number().int().min(1).max(50).default(20).describe('At most this many memories in the per-query part (1 to 50)'),
  mmr_lambda: z
    .number()
    .min(0)
    .max(1)
    .default(0.3)
    .describe(
      'Relevance against diversity in the per-query part (maximal marginal relevance, both normalised to 0..1 over the candidates): ' +
        '1 keeps the search order, 0 takes what differs most from the memories already taken',
    ),
  container_tag: z.string().min(1).max(256).nullable().default(null).describe('Only memories with this container tag, in both parts'),
  trust: trustFilter,
  as_of: instant
    .nullable()
    .default(null)
    .describe(
      'Build the block from what was valid at this moment (ISO 8601 with offset), in both parts, as search reads as_of: facts since ' +
        'superseded or ended are used inside their validity, a fact retracted as wrong never (docs/time.md)',
    ),
};

/** One of query and messages, not both: the query is never guessed between them. */
export const oneQuery = (input: { query?: string; messages?: unknown[] }) => (input.query === undefined) !== (input.messages === undefined);
export const ONE_QUERY = { message: 'Send query or messages, one of them', path: ['query'] };

export const contextAllFields = {
  collection: collectionName.optional().describe('Only this collection (default: every collection the key may read)'),
};

const contextMemory = z.object({
  id: z.string(),
  collection: z.string(),
  category: z.string(),
  text: z.string(),
  trust: trustClass,
});

export const contextResponse = z
  .object({
    context: z.string().describe('The rendered block, stable.text followed by query.text; empty when no memory fits or matches'),
    tokens: z.number().int().describe('Tokens of context, counted as max_tokens is (never more than it)'),
    encoding: z.literal('o200k_base').describe('The tokenizer the budget is counted with'),
    stable: z
      .object({
        text: z.string().describe('Profile facts, preferences and pinned memories: the same for every query until one of them changes'),
        version: z.string().describe('A hash of stable.text: it changes only when the stable part does'),
        memories: z.array(contextMemory.extend({ pinned: z.boolean() })),
      })
      .describe('The part that does not depend on the query, first in the block so that prompt caches keep hitting'),
    query: z
      .object({
        text: z.string().describe('The rest of the block: the memories recalled for this query'),
        memories: z.array(contextMemory.extend({ score: z.number().describe('The search score, 0 to 1') })).describe('In the order of the block'),
        candidates: z.number().int().describe('Search results the memories were chosen from'),
      })
      .describe('The part recalled for this query: hybrid search, then diversified (MMR) and packed to the budget'),
  })
  .openapi('Context');
export type ContextResponse = z.infer<typeof contextResponse>;
const contextInput = z.object(contextFields);
export type ContextInput = z.output<typeof contextInput>;

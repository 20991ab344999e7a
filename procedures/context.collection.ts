import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { contextFields, contextResponse, ONE_QUERY, oneQuery } from '../src/schemas/context.ts';
import { buildContext } from '../src/services/context/context.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'context.collection',
  summary: 'The context block for a prompt from one collection, within a token budget',
  description:
    'One rendered block and its parts: first a stable part (facts, preferences and pinned memories, with a version hash that changes ' +
    'only when they do, so that prompt caches keep hitting), then the memories a hybrid search finds for the query (or the latest ' +
    'user message of messages), diversified so that near-copies do not crowd the rest out and packed until the rendered block ' +
    'reaches max_tokens. Recalled text is marked as data, not instructions.',
  rest: { method: 'POST', path: `${C}/context`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, ...contextFields }).refine(oneQuery, ONE_QUERY),
  output: contextResponse,
  handler: (ctx, { collection, ...input }) => buildContext(ctx, input, collection),
});

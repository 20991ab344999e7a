import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { collectionSummary } from '../src/services/graph/digest.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'graph.summary',
  summary: 'A summary and the main themes of the newest memories of the collection',
  description:
    'Reads the newest `limit` current memories (each clipped to 1000 characters, 24000 in all). Written by the LLM when ' +
    'one is configured; otherwise, or when the LLM fails, an extractive summary (the most central first sentences, and ' +
    'the most shared terms as themes). Never fails for want of an LLM. Cached until the collection changes.',
  rest: { method: 'GET', path: `${C}/summary`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'summarize_collection',
    title: 'Summarise a collection',
    description:
      'Summarise what a collection holds: a short summary and its main themes. Call it for an overview before ' + 'working with an unfamiliar collection.',
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, limit: z.coerce.number().int().min(1).max(200).default(50) }),
  output: z
    .object({ summary: z.string(), themes: z.array(z.string()), based_on: z.number().int().describe('Memories read'), generated_at: timestamp })
    .openapi('Summary'),
  handler: (ctx, input) => collectionSummary(ctx, input.collection, input.limit),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { retractions } from '../src/services/graph/reports.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'graph.retractions',
  summary: 'Retracted memories, the latest retraction first, each with its retraction (how, at, reason, retracted_at)',
  rest: { method: 'GET', path: `${C}/retractions`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'list_retractions',
    title: 'List retracted facts',
    description:
      'List memories that were retracted as no longer true ("ended") or never true ("wrong"), with when and why. Call it when the ' +
      'user asks what was corrected or withdrawn, or why a fact no longer shows up.',
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, limit: z.coerce.number().int().min(1).max(1000).default(100) }),
  output: z.array(memorySchema),
  handler: (ctx, input) => retractions(ctx, input.collection, input.limit),
});

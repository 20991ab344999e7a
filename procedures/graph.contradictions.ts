import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { contradiction } from '../src/schemas/graph.ts';
import { contradictions } from '../src/services/graph/reports.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'graph.contradictions',
  summary: 'Superseded facts paired with the newer facts that replaced them, newest first',
  rest: { method: 'GET', path: `${C}/contradictions`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'list_contradictions',
    title: 'List replaced facts',
    description:
      'List facts that were replaced by newer, contradicting facts, with what replaced them. Call it when the user ' +
      'asks what changed, or why an older fact no longer shows up.',
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, limit: z.coerce.number().int().min(1).max(1000).default(100) }),
  output: z.array(contradiction),
  handler: (ctx, input) => contradictions(ctx, input.collection, input.limit),
});

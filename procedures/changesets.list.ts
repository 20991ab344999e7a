import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { CHANGESET_STATES } from '../src/schemas/consolidation.ts';
import { changesetSummary } from '../src/schemas/consolidation.ts';
import { listChangesets } from '../src/services/consolidation/changesets.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'changesets.list',
  summary: "A collection's change sets, newest first, with how many of their changes are in each state",
  rest: { method: 'GET', path: `${C}/changesets`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'list_changesets',
    title: 'List change sets',
    description: "List a collection's consolidation change sets (state open: changes waiting for review).",
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({
    ...inCollection,
    state: z.enum(CHANGESET_STATES).optional().describe('Only the change sets in this state'),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  }),
  output: z.object({ changesets: z.array(changesetSummary) }),
  handler: (ctx, input) => listChangesets(ctx, input.collection, input.state, input.limit),
});

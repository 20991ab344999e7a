import { defineProcedure } from '../src/pipeline/procedure.ts';
import { z } from 'zod';
import { changesetView } from '../src/schemas/consolidation.ts';
import { getChangeset } from '../src/services/consolidation/changesets.ts';
import { CS, inChangeset, MISSING_CHANGESET } from './changeset-path.ts';

export default defineProcedure({
  name: 'changesets.get',
  summary: 'A change set with every change, its state and its evidence (the memories, similarity, times, recall counts)',
  rest: { method: 'GET', path: CS, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'get_changeset',
    title: 'Read a change set',
    description: 'Read a consolidation change set: each proposed change with the memories it touches and why.',
  },
  errors: { NOT_FOUND: MISSING_CHANGESET },
  input: z.object(inChangeset),
  output: changesetView,
  handler: (ctx, input) => getChangeset(ctx, input.collection, input.id),
});

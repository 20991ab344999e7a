import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { changesetView } from '../src/schemas/consolidation.ts';
import { rejectChangeset } from '../src/services/consolidation/review.ts';
import { changeIds, CS, inChangeset, MISSING_CHANGESET } from './changeset-path.ts';

export default defineProcedure({
  name: 'changesets.reject',
  summary: 'Reject the proposed changes of a change set (the named ones, or all): no memory changes',
  rest: { method: 'POST', path: `${CS}/reject`, status: 200 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'reject_changeset',
    title: 'Reject a change set',
    description: 'Reject proposed changes of a consolidation change set (all, or the ids given); the memories stay as they are.',
    idempotent: true,
  },
  errors: { NOT_FOUND: MISSING_CHANGESET, CONFLICT: 'The run has not finished' },
  input: z.object({ ...inChangeset, changes: changeIds }),
  output: changesetView,
  handler: (ctx, input) => rejectChangeset(ctx, input.collection, input.id, input.changes),
});

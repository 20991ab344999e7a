import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { changesetView } from '../src/schemas/consolidation.ts';
import { applyChangeset } from '../src/services/consolidation/review.ts';
import { changeIds, CS, inChangeset, MISSING_CHANGESET } from './changeset-path.ts';

export default defineProcedure({
  name: 'changesets.applyChanges',
  summary: 'Apply the proposed changes of a change set (the named ones, or all), each all or nothing',
  description:
    'Each change is applied in one transaction: merged memories are archived and linked to the one kept, an outdated ' +
    'fact is superseded, noise is archived, a validity is corrected. A change whose memories changed, were pinned or ' +
    'deleted since the proposal fails with the reason and touches nothing. Nothing is deleted, and each applied change ' +
    'can be undone. Changes already applied, rejected or failed are left as they are.',
  rest: { method: 'POST', path: `${CS}/apply`, status: 200 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'apply_changeset',
    title: 'Apply a change set',
    description: 'Apply the proposed changes of a consolidation change set (all, or the ids given). Only after the user agreed.',
    destructive: true,
  },
  errors: { NOT_FOUND: MISSING_CHANGESET, CONFLICT: 'The run has not finished, or it failed' },
  input: z.object({ ...inChangeset, changes: changeIds }),
  output: changesetView,
  handler: (ctx, input) => applyChangeset(ctx, input.collection, input.id, input.changes),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { changesetView } from '../src/schemas/consolidation.ts';
import { undoChange } from '../src/services/consolidation/review.ts';
import { CS, inChangeset } from './changeset-path.ts';

export default defineProcedure({
  name: 'changesets.undo',
  summary: 'Undo an applied change: every memory it touched is as it was before, its times included',
  rest: { method: 'POST', path: `${CS}/changes/{change}/undo`, status: 200 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'undo_change',
    title: 'Undo an applied change',
    description: 'Undo one applied change of a consolidation change set: the memories it merged, superseded or archived are restored.',
  },
  errors: {
    NOT_FOUND: 'The collection, the change set or the change does not exist',
    CONFLICT: 'The change is not applied, or a memory it touched changed or was deleted since',
  },
  input: z.object({ ...inChangeset, change: z.string().describe('The change id (UUID)') }),
  output: changesetView,
  handler: (ctx, input) => undoChange(ctx, input.collection, input.id, input.change),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { SCHEDULES } from '../src/schemas/consolidation.ts';
import { changeKind, consolidationSettings } from '../src/schemas/consolidation.ts';
import { putSettings } from '../src/services/consolidation/schedule.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'consolidation.putConfig',
  summary: "Set a collection's consolidation schedule (off, daily, weekly) and the kinds of change its runs apply at once",
  description:
    'A scheduled run starts one period after the schedule is set, then every period. Kinds named in auto_apply are ' +
    'applied by the run itself, still recorded in its change set and undoable; the others wait for review.',
  rest: { method: 'PUT', path: `${C}/consolidation`, status: 200 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'collection', permission: 'write' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({
    ...inCollection,
    schedule: z.enum(SCHEDULES).default('off'),
    auto_apply: z.array(changeKind).max(10).default([]),
  }),
  output: consolidationSettings,
  handler: (ctx, { collection, ...input }) => putSettings(ctx, collection, input),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { consolidationSettings } from '../src/schemas/consolidation.ts';
import { getSettings } from '../src/services/consolidation/schedule.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'consolidation.getConfig',
  summary: "A collection's consolidation schedule and the kinds of change its runs apply at once",
  rest: { method: 'GET', path: `${C}/consolidation`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object(inCollection),
  output: consolidationSettings,
  handler: (ctx, input) => getSettings(ctx, input.collection),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { updateMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.archive',
  summary: 'Archive (soft delete) or restore a memory; archived memories leave default listing and search',
  rest: { method: 'POST', path: `${C}/memories/{id}/archive`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object({ ...memoryPath, archived: z.boolean() }),
  output: memorySchema,
  handler: (ctx, input) => updateMemory(ctx, input.collection, input.id, { archived: input.archived }),
});

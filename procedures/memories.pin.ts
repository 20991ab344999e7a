import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { updateMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.pin',
  summary: 'Pin or unpin a memory (pinned memories list first and are never removed by dedup)',
  rest: { method: 'POST', path: `${C}/memories/{id}/pin`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object({ ...memoryPath, pinned: z.boolean() }),
  output: memorySchema,
  handler: (ctx, input) => updateMemory(ctx, input.collection, input.id, { pinned: input.pinned }),
});

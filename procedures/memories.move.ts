import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { moveMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.move',
  summary: 'Move a memory to another collection (created if needed); answers the memory as it now stands',
  rest: { method: 'POST', path: `${C}/memories/{id}/move`, status: 200 },
  access: 'write',
  collection: [
    { field: 'collection', permission: 'write' },
    { field: 'to_collection', permission: 'write' },
  ],
  errors: { BAD_REQUEST: 'to_collection is the collection the memory is in', NOT_FOUND: MISSING_MEMORY },
  input: z.object({ ...memoryPath, to_collection: collectionName }),
  output: memorySchema,
  handler: (ctx, input) => moveMemory(ctx, input.collection, input.id, input.to_collection),
});

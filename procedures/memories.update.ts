import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
import { category, importance, memoryText, metadataObject } from '../src/schemas/fields.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { updateMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.update',
  summary: 'Change a memory; only supplied fields change and a new text is re-embedded',
  rest: { method: 'PATCH', path: `${C}/memories/{id}`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object({
    ...memoryPath,
    text: memoryText.optional(),
    importance: importance.optional(),
    category: category.optional(),
    metadata: metadataObject.optional(),
  }),
  output: memorySchema,
  handler: (ctx, { collection, id, ...patch }) => updateMemory(ctx, collection, id, patch),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { category, importance, memoryText, metadataObject } from '../src/schemas/fields.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { updateMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

const changeable = {
  text: memoryText.optional(),
  importance: importance.optional(),
  category: category.optional(),
  metadata: metadataObject.optional(),
};

export default defineProcedure({
  name: 'memories.update',
  summary: 'Change a memory; only supplied fields change (at least one, or 422) and a new text is re-embedded',
  rest: { method: 'PATCH', path: `${C}/memories/{id}`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'update_memory',
    title: 'Correct a memory',
    description:
      "Change a stored memory's text, importance, category or metadata (only the fields given; a new text is " +
      're-embedded). Call it when a memory you found is wrong or out of date and you know the correction.',
    idempotent: true,
  },
  errors: { NOT_FOUND: MISSING_MEMORY },
  // A patch that changes nothing is refused rather than answered 200 with a new updated_at.
  input: z
    .object({ ...memoryPath, ...changeable })
    .refine((patch) => Object.keys(changeable).some((field) => patch[field as keyof typeof changeable] !== undefined), {
      message: `Nothing to change: send at least one of ${Object.keys(changeable).join(', ')}`,
    }),
  output: memorySchema,
  handler: (ctx, { collection, id, ...patch }) => updateMemory(ctx, collection, id, patch),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.delete',
  summary: 'Delete a memory and its stored files',
  rest: { method: 'DELETE', path: `${C}/memories/{id}`, status: 204 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'delete_memory',
    title: 'Delete a memory',
    description:
      'Delete one memory and its files by collection and id. Call it when the user asks to remove a specific memory ' + 'you found; it cannot be restored.',
    destructive: true,
    idempotent: true,
  },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object(memoryPath),
  output: noContent,
  handler: async (ctx, input) => {
    await deleteMemory(ctx, input.collection, input.id);
    return null;
  },
});

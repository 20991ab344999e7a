import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { unretractMemory } from '../src/services/memory/retraction.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.unretract',
  summary: 'Undo a retraction: the memory holds again as it did before it (its valid_to restored); a memory not retracted is answered unchanged',
  rest: { method: 'DELETE', path: `${C}/memories/{id}/retract`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'unretract_memory',
    title: 'Undo a retraction',
    description:
      'Restore a memory retracted with retract_memory: it holds again as it did before (its valid_to as it was). Call it when the user ' +
      'says a fact marked as ended or wrong was right after all. A memory not retracted is answered unchanged.',
    idempotent: true,
  },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object(memoryPath),
  output: memorySchema,
  handler: (ctx, { collection, id }) => unretractMemory(ctx, collection, id),
});

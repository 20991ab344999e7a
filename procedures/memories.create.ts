import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memoryCreate, memorySchema, timesInOrder } from '../src/schemas/memory.ts';
import { createMemories } from '../src/services/memory/memories.ts';
import { C, inCollection } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.create',
  summary: 'Store a memory (the collection is created on first write); searchable as soon as this returns',
  rest: { method: 'POST', path: `${C}/memories`, status: 201 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'store_memory',
    title: 'Store a memory',
    description:
      'Store one memory exactly as given (a fact, preference, decision or note) in a collection; it is searchable ' +
      'at once and the collection is created on first write. Use it for one self-contained statement you have ' +
      'worded; for raw conversation text use remember, which extracts the facts and replaces outdated ones.',
  },
  input: z.object({ ...inCollection, ...memoryCreate.shape }).superRefine(timesInOrder),
  output: memorySchema,
  handler: async (ctx, { collection, ...item }) => (await createMemories(ctx, collection, [item]))[0]!,
});

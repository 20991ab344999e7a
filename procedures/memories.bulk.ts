import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memoryCreate, timesInOrder } from '../src/schemas/memory.ts';
import { createMemories } from '../src/services/memory/memories.ts';
import { C, inCollection } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.bulk',
  summary: 'Store up to 100 memories at once; one invalid item fails the whole call (422 naming its index)',
  description: 'The body is a bare JSON array of memory create bodies. ids are returned in input order.',
  rest: { method: 'POST', path: `${C}/memories/bulk`, status: 201 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  input: z.object({ ...inCollection, items: z.array(memoryCreate.superRefine(timesInOrder)).min(1).max(100) }),
  output: z.object({ created: z.number().int(), ids: z.array(z.string()) }),
  handler: async (ctx, { collection, items }) => {
    const memories = await createMemories(ctx, collection, items);
    return { created: memories.length, ids: memories.map((m) => m.id) };
  },
});

import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
import { queryBool } from '../src/schemas/fields.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { listMemories } from '../src/services/memory/memories.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.list',
  summary: 'List memories, pinned first, then newest first',
  rest: { method: 'GET', path: `${C}/memories`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({
    ...inCollection,
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: z.coerce.number().int().min(0).default(0),
    include_archived: queryBool.default(false),
  }),
  output: z.array(memorySchema),
  handler: (ctx, input) => listMemories(ctx, input),
});

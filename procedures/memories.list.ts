import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { category, queryBool } from '../src/schemas/fields.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { listMemories } from '../src/services/memory/memories.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.list',
  summary: 'List memories, pinned first, then newest first; filter by category, container_tag, pinned, archived',
  rest: { method: 'GET', path: `${C}/memories`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({
    ...inCollection,
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: z.coerce.number().int().min(0).default(0),
    include_archived: queryBool.default(false),
    category: category.optional().describe('Only memories of this category'),
    container_tag: z.string().min(1).max(256).optional().describe('Only memories with this container tag'),
    pinned: queryBool.optional().describe('true: only pinned memories; false: only unpinned ones'),
    archived: queryBool.optional().describe('true: only archived memories; false: only live ones (overrides include_archived)'),
  }),
  output: z.array(memorySchema),
  handler: (ctx, input) => listMemories(ctx, input),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { withFileUrls } from '../src/services/files/uploads.ts';
import { findMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.get',
  summary: 'Get one memory',
  rest: { method: 'GET', path: `${C}/memories/{id}`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'get_memory',
    title: 'Get a memory',
    description: 'Fetch one memory by its collection and id, e.g. to read the full text, metadata and files of a search ' + 'result.',
  },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object(memoryPath),
  output: memorySchema,
  handler: async (ctx, input) => withFileUrls(ctx, await findMemory(ctx.app.db, ctx, input.collection, input.id)),
});

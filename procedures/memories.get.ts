import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memoryWithUse } from '../src/schemas/memory.ts';
import { withFileUrls } from '../src/services/files/uploads.ts';
import { findServable } from '../src/services/memory/memories.ts';
import { handOver } from '../src/services/ledger/handover.ts';
import { memoryUseOf } from '../src/services/ledger/read.ts';
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
  output: memoryWithUse,
  handler: async (ctx, input) => {
    // The memory first: an id naming none is a 404 before anything else reads it.
    const memory = await withFileUrls(ctx, await findServable(ctx.app.db, ctx, input.collection, input.id));
    handOver(ctx, [memory.id], false);
    return { ...memory, use: await memoryUseOf(ctx, memory.id) };
  },
});

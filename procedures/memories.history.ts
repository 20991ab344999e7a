import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memoryHistorySchema } from '../src/schemas/memory.ts';
import { memoryHistory } from '../src/services/memory/history.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.history',
  summary: "A memory's supersession history both ways: the newer facts that superseded it, and the older facts it superseded",
  description:
    'Supersession is followed by id, up to 100 steps each way, also into other collections the memory moved to; facts in a ' +
    'collection the key may not read are left out. Each entry carries the times, retraction and provenance of its memory.',
  rest: { method: 'GET', path: `${C}/memories/{id}/history`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'get_memory_history',
    title: "Get a memory's history",
    description:
      'See what replaced a fact and what it replaced: the newer facts that superseded it, up to the one that holds now, and the ' +
      'older facts it superseded, each with when it held. Call it when the user asks how something changed over time.',
  },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object(memoryPath),
  output: memoryHistorySchema,
  handler: (ctx, { collection, id }) => memoryHistory(ctx, collection, id),
});

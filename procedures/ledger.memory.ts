import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memoryRecipientsSchema } from '../src/schemas/trust.ts';
import { memoryRecipients } from '../src/services/ledger/read.ts';
import { findMemory } from '../src/services/memory/memories.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'ledger.memory',
  summary: 'Which agents were given this memory, how often, first and last, and through which front ends',
  rest: { method: 'GET', path: `${C}/memories/{id}/ledger`, status: 200 },
  access: 'read',
  keyRole: 'admin',
  collection: { field: 'collection', permission: 'read' },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object(memoryPath),
  output: memoryRecipientsSchema,
  handler: async (ctx, input) => {
    const memory = await findMemory(ctx.app.db, ctx, input.collection, input.id);
    return { memory_id: memory.id, agents: await memoryRecipients(ctx, memory.id) };
  },
});

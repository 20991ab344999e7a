import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { instant } from '../src/schemas/fields.ts';
import { memorySchema, retraction } from '../src/schemas/memory.ts';
import { retractMemory } from '../src/services/memory/retraction.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.retract',
  summary: 'Retract a memory: it stopped being true ("ended", at a moment) or was never true ("wrong"); undone by DELETE',
  description:
    'Nothing is deleted. "ended" closes its validity (valid_to) at `at` (now when left out): search leaves it out from then on, and as_of ' +
    'finds it before. "wrong": no search finds it, current or as of any moment. Sends the webhook event memory.retracted (docs/time.md).',
  rest: { method: 'POST', path: `${C}/memories/{id}/retract`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'retract_memory',
    title: 'Retract a memory',
    description:
      'Mark one memory as no longer true (how "ended", optionally at the moment it stopped) or as never true (how "wrong"), ' +
      'with a reason. Call it when the user says a remembered fact changed or was a mistake; it stays stored and can be restored.',
  },
  errors: { NOT_FOUND: MISSING_MEMORY, CONFLICT: 'The memory is already retracted' },
  input: z.object({
    ...memoryPath,
    how: retraction.shape.how,
    at: instant.optional().describe('ended: when it stopped being true (ISO 8601 with offset, later than valid_from); now when left out'),
    reason: z.string().min(1).max(1000).nullable().optional().describe('Why, for the record (1 to 1000 characters)'),
  }),
  output: memorySchema,
  handler: (ctx, { collection, id, ...input }) => retractMemory(ctx, collection, id, input),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { quarantineState } from '../src/schemas/trust.ts';
import { listQuarantine } from '../src/services/memory/quarantine.ts';
import { Q } from './quarantine-path.ts';

export default defineProcedure({
  name: 'quarantine.list',
  summary: 'The memories held in quarantine (or released, rejected or flagged), newest first, with the reasons',
  description: 'A held memory is stored but served to no agent until an admin releases it (docs/trust.md).',
  rest: { method: 'GET', path: Q, status: 200 },
  access: 'read',
  keyRole: 'admin',
  errors: { BAD_REQUEST: 'The cursor is not the `next` of a page this endpoint answered' },
  mcp: {
    tool: 'list_quarantine',
    title: 'List quarantined memories',
    description: 'List the memories held because their text tries to instruct an agent, with the reasons, for an admin to release or reject.',
  },
  input: z.object({
    state: quarantineState.default('held').describe('held (default), released, rejected or flagged'),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(200).optional().describe('The `next` of the page before'),
  }),
  output: z.object({ memories: z.array(memorySchema), next: z.string().nullable().describe('The cursor of the next page; null on the last') }),
  handler: (ctx, input) => listQuarantine(ctx, input),
});

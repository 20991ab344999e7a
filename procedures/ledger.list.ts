import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { instant } from '../src/schemas/fields.ts';
import { ledgerPage } from '../src/schemas/trust.ts';
import { ledgerEntries } from '../src/services/ledger/read.ts';

export default defineProcedure({
  name: 'ledger.list',
  summary: 'The influence ledger: what memories were handed to which agent, through which front end, in which session, newest first',
  description:
    'Each entry names the memories as they were handed over (the text then, and what the memory is now: a superseded, retracted or ' +
    'held memory is still named), the identity, the front end, the request and the session where the caller said (docs/trust.md).',
  rest: { method: 'GET', path: '/v1/memory/ledger', status: 200 },
  access: 'read',
  keyRole: 'admin',
  errors: { BAD_REQUEST: 'The cursor is not the `next` of a page this endpoint answered' },
  mcp: {
    tool: 'list_ledger',
    title: 'What agents were given',
    description:
      'List what memories were handed to agents: narrow by agent key id, session, memory id or time. Use it after a wrong or poisoned memory to see who was given it.',
  },
  input: z.object({
    agent_id: z.string().max(100).optional().describe('Only what this key (agent) was given'),
    session_id: z.string().max(200).optional().describe('Only this session (a hook session, MCP session or proxy conversation)'),
    memory_id: z.string().max(100).optional().describe('Only the entries that handed over this memory'),
    from: instant.optional().describe('From this moment on (ISO 8601 with offset)'),
    to: instant.optional().describe('Before this moment'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(200).optional().describe('The `next` of the page before'),
  }),
  output: ledgerPage,
  handler: (ctx, input) => ledgerEntries(ctx, input),
});

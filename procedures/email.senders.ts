import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { listSenders } from '../src/services/email/senders.ts';

/** The allowlist as GET and PUT answer it. */
export const sendersView = z.object({
  senders: z.array(
    z.object({
      sender: z.string().describe('An address, or @domain for every address of the domain'),
      default: z.boolean().describe('true for the account email, which is always allowed'),
    }),
  ),
});

export default defineProcedure({
  name: 'email.senders',
  summary: 'Who may send to the drop address: the account email (default: true) and the listed addresses and @domains',
  rest: { method: 'GET', path: '/v1/memory/email/senders', status: 200 },
  access: 'read',
  input: z.object({}),
  output: sendersView,
  handler: (ctx) => listSenders(ctx),
});

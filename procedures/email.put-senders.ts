import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { putSenders } from '../src/services/email/senders.ts';
import { sendersView } from './email.senders.ts';

const DOMAIN = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+';
/** `local@domain` or `@domain`; the local part without spaces, quotes, brackets or separators. */
const SENDER = new RegExp(`^(?:[^\\s@<>()\\[\\],;:"\\\\]{1,64})?@${DOMAIN}$`);

const sender = z.string().trim().toLowerCase().max(254).regex(SENDER, 'must be an email address (ana@example.com) or @domain (@example.org)');

export default defineProcedure({
  name: 'email.putSenders',
  summary: 'Replace the sender allowlist; answers the new list',
  description:
    'Each entry is an address (ana@example.com) or a whole domain (@example.org, not its subdomains); entries are ' +
    "lowercased. The account email is always allowed and needs no entry. Mail is checked against the message's From " +
    'address (the envelope sender when there is none); mail from anyone else is dropped without a bounce.',
  rest: { method: 'PUT', path: '/v1/memory/email/senders', status: 200 },
  access: 'write',
  keyRole: 'admin',
  input: z.object({ senders: z.array(sender).max(100).describe('At most 100 addresses or @domains; [] leaves only the account email') }),
  output: sendersView,
  handler: (ctx, input) => putSenders(ctx, input.senders),
});

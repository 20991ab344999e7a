import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { linkSent, publicEmail } from '../src/schemas/access.ts';
import { recoverKey } from '../src/services/access/signup.ts';

export default defineProcedure({
  name: 'account.recoverKey',
  summary: 'Public: mail the account of this address a one-time link that issues a new API key',
  description: 'Always 202 with the same detail. Existing keys keep working. Rate-limited per client address and per email address (429).',
  rest: { method: 'POST', path: '/v1/memory/recover-key', status: 202 },
  access: 'public',
  errors: { TOO_MANY_REQUESTS: 'Too many sign-ups or recoveries from this client address or for this email address this hour' },
  input: z.object({ email: publicEmail }),
  output: linkSent,
  handler: (ctx, input) => recoverKey(ctx, input.email),
});

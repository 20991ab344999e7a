import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { linkSent, publicEmail } from '../src/schemas/access.ts';
import { signup } from '../src/services/access/signup.ts';

export default defineProcedure({
  name: 'account.signup',
  summary: 'Public: create a free-tier tenant and mail a one-time link revealing its API key',
  description:
    'Always 202 with the same detail, whether or not the address already has an account (that address is mailed a ' +
    'notice instead). The link works once, within 24 hours. Rate-limited per client address and per email address (429).',
  rest: { method: 'POST', path: '/v1/memory/signup', status: 202 },
  access: 'public',
  errors: { TOO_MANY_REQUESTS: 'Too many sign-ups or recoveries from this client address or for this email address this hour' },
  input: z.object({ email: publicEmail, name: z.string().min(1).max(200).optional().describe('Tenant name; default: the email address') }),
  output: linkSent,
  handler: (ctx, input) => signup(ctx, input),
});

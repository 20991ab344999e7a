import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { publicEmail } from '../src/schemas/access.ts';
import { personRole, personSchema } from '../src/schemas/people.ts';
import { invitePerson } from '../src/services/people/people.ts';

export default defineProcedure({
  name: 'people.invite',
  summary: "Invite a person by e-mail: an invited person, active at their first sign-in through the tenant's provider, and a mail with the link",
  description: 'Only an owner (or a key of no person) invites an owner (docs/people.md, "Roles").',
  rest: { method: 'POST', path: '/v1/memory/people', status: 201 },
  access: 'write',
  keyRole: 'admin',
  errors: { CONFLICT: 'The e-mail is a person of the tenant already', FORBIDDEN: 'An owner invited by someone who is not an owner' },
  input: z.object({ email: publicEmail, name: z.string().max(200).optional(), role: personRole.default('member') }),
  output: personSchema,
  handler: (ctx, input) => invitePerson(ctx, input),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { personRole, personSchema } from '../src/schemas/people.ts';
import { updatePerson } from '../src/services/people/people.ts';

export default defineProcedure({
  name: 'people.update',
  summary: "Change a person's role, name or state: suspending ends their sessions and refuses their keys from the next call",
  description: 'The tenant keeps an active owner (400); only an owner changes an owner\'s role or makes one (docs/people.md, "Roles").',
  rest: { method: 'PATCH', path: '/v1/memory/people/{person_id}', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: {
    BAD_REQUEST: 'It would leave the tenant without an active owner, the person was removed, or an invited person made active before signing in',
    FORBIDDEN: "An owner's role changed, or an owner made, by someone who is not an owner",
    NOT_FOUND: 'No person of this tenant has this id',
  },
  input: z.object({
    person_id: z.string(),
    role: personRole.optional(),
    name: z.string().max(200).optional(),
    state: z.enum(['active', 'suspended']).optional().describe('`suspended`: no sign-in, no session, none of their keys; `active` restores them'),
  }),
  output: personSchema,
  handler: (ctx, { person_id, ...input }) => updatePerson(ctx, person_id, input),
});

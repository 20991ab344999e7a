import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { removePerson } from '../src/services/people/people.ts';

export default defineProcedure({
  name: 'people.remove',
  summary: 'Remove a person: out of every team, sessions ended, their keys refused from the next call; kept as removed in the lists that name them',
  rest: { method: 'DELETE', path: '/v1/memory/people/{person_id}', status: 204 },
  access: 'write',
  keyRole: 'admin',
  errors: {
    BAD_REQUEST: 'It would leave the tenant without an active owner',
    FORBIDDEN: 'An owner removed by someone who is not an owner',
    NOT_FOUND: 'No person of this tenant has this id',
  },
  input: z.object({ person_id: z.string() }),
  output: noContent,
  handler: async (ctx, input) => {
    await removePerson(ctx, input.person_id);
    return null;
  },
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { teamInput, teamSchema } from '../src/schemas/people.ts';
import { createTeam } from '../src/services/people/teams.ts';

export default defineProcedure({
  name: 'teams.create',
  summary: 'Create a team, made here or following a group of the provider (its members then kept in sync at each sign-in)',
  rest: { method: 'POST', path: '/v1/memory/teams', status: 201 },
  access: 'write',
  keyRole: 'admin',
  errors: { CONFLICT: 'A team of this name exists, or one follows this provider group' },
  input: z.object({ name: teamInput.shape.name.unwrap(), provider_group: teamInput.shape.provider_group }),
  output: teamSchema,
  handler: (ctx, input) => createTeam(ctx, input),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { teamInput, teamSchema } from '../src/schemas/people.ts';
import { updateTeam } from '../src/services/people/teams.ts';

export default defineProcedure({
  name: 'teams.update',
  summary: 'Rename a team or change the provider group it follows (null: its members are managed here)',
  rest: { method: 'PATCH', path: '/v1/memory/teams/{team_id}', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { CONFLICT: 'A team of this name exists, or one follows this provider group', NOT_FOUND: 'No team of this tenant has this id' },
  input: z.object({ team_id: z.string(), ...teamInput.shape }),
  output: teamSchema,
  handler: (ctx, { team_id, ...input }) => updateTeam(ctx, team_id, input),
});

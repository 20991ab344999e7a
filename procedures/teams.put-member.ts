import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { teamRole, teamSchema } from '../src/schemas/people.ts';
import { putTeamMember } from '../src/services/people/teams.ts';

export default defineProcedure({
  name: 'teams.putMember',
  summary: 'Add a person to a team, or change their team role (a tenant admin or an admin of the team)',
  rest: { method: 'PUT', path: '/v1/memory/teams/{team_id}/members/{person_id}', status: 200 },
  access: 'write',
  errors: {
    FORBIDDEN: 'Neither a tenant admin nor an admin of the team',
    NOT_FOUND: 'No such team, or the person is not an active or invited person of the tenant',
  },
  input: z.object({ team_id: z.string(), person_id: z.string(), role: teamRole.default('member') }),
  output: teamSchema,
  handler: (ctx, { team_id, person_id, role }) => putTeamMember(ctx, team_id, person_id, { role }),
});

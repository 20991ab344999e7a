import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteTeamMember } from '../src/services/people/teams.ts';

export default defineProcedure({
  name: 'teams.deleteMember',
  summary: 'Take a person out of a team (a tenant admin or an admin of the team)',
  rest: { method: 'DELETE', path: '/v1/memory/teams/{team_id}/members/{person_id}', status: 204 },
  access: 'write',
  errors: { FORBIDDEN: 'Neither a tenant admin nor an admin of the team', NOT_FOUND: 'No such team, or the person is not in it' },
  input: z.object({ team_id: z.string(), person_id: z.string() }),
  output: noContent,
  handler: async (ctx, input) => {
    await deleteTeamMember(ctx, input.team_id, input.person_id);
    return null;
  },
});

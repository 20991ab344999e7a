import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteTeam } from '../src/services/people/teams.ts';

export default defineProcedure({
  name: 'teams.delete',
  summary: 'Delete a team and its memberships; its collections are read by no one of it any more',
  rest: { method: 'DELETE', path: '/v1/memory/teams/{team_id}', status: 204 },
  access: 'write',
  keyRole: 'admin',
  errors: { NOT_FOUND: 'No team of this tenant has this id' },
  input: z.object({ team_id: z.string() }),
  output: noContent,
  handler: async (ctx, input) => {
    await deleteTeam(ctx, input.team_id);
    return null;
  },
});

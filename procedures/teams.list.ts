import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { teamSchema } from '../src/schemas/people.ts';
import { listTeams } from '../src/services/people/teams.ts';

export default defineProcedure({
  name: 'teams.list',
  summary: "The tenant's teams and their members",
  rest: { method: 'GET', path: '/v1/memory/teams', status: 200 },
  access: 'read',
  input: z.object({}),
  output: z.array(teamSchema),
  handler: (ctx) => listTeams(ctx),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { personSchema, personState } from '../src/schemas/people.ts';
import { listPeople } from '../src/services/people/people.ts';

export default defineProcedure({
  name: 'people.list',
  summary: "The tenant's people, with their roles, states and teams (removed people only when asked with state=removed)",
  rest: { method: 'GET', path: '/v1/memory/people', status: 200 },
  access: 'read',
  input: z.object({ state: personState.optional() }),
  output: z.array(personSchema),
  handler: (ctx, input) => listPeople(ctx, input),
});

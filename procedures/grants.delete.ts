import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName, noContent } from '../src/schemas/fields.ts';
import { deleteGrant } from '../src/services/access/grants.ts';

export default defineProcedure({
  name: 'grants.delete',
  summary: 'Remove the grant of a key, a person or a team, by its id; removing the last grant reopens the collection (404 if there is no such grant)',
  rest: { method: 'DELETE', path: '/v1/memory/collections/{name}/grants/{agent_key_id}', status: 204 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'name', permission: 'write' },
  errors: {
    BAD_REQUEST: 'The change would leave the collection restricted with nobody able to write it',
    NOT_FOUND: 'The collection does not exist, or the key, person or team has no grant on it',
  },
  input: z.object({ name: collectionName, agent_key_id: z.string().describe("The key's, person's or team's id (the grant's `id`)") }),
  output: noContent,
  handler: async (ctx, input) => {
    await deleteGrant(ctx, input.name, input.agent_key_id);
    return null;
  },
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName, noContent } from '../src/schemas/fields.ts';
import { deleteGrant } from '../src/services/access/grants.ts';

export default defineProcedure({
  name: 'grants.delete',
  summary: "Remove an agent's grant; removing the last grant reopens the collection (404 if there is no such grant)",
  rest: { method: 'DELETE', path: '/v1/memory/collections/{name}/grants/{agent_key_id}', status: 204 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'name', permission: 'write' },
  errors: {
    BAD_REQUEST: 'The change would leave the collection restricted with no active key granted can_write',
    NOT_FOUND: 'The collection does not exist, or the key has no grant on it',
  },
  input: z.object({ name: collectionName, agent_key_id: z.string() }),
  output: noContent,
  handler: async (ctx, input) => {
    await deleteGrant(ctx, input.name, input.agent_key_id);
    return null;
  },
});

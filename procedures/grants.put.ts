import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { grantSchema } from '../src/schemas/access.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { putGrant } from '../src/services/access/grants.ts';

export default defineProcedure({
  name: 'grants.put',
  summary: 'Grant an agent (API key) read and/or write access to a collection; the first grant restricts the collection',
  description:
    'Once a collection has a grant, only granted keys may read (can_read) or write (can_write) it; others get 403 and ' +
    'no longer see it in listings or all-collection search. Managing grants needs an admin key with write access to the collection. ' +
    'Unknown collection, or a key id that is not an active key of the tenant: 404.',
  rest: { method: 'PUT', path: '/v1/memory/collections/{name}/grants', status: 200 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'name', permission: 'write' },
  errors: {
    BAD_REQUEST: 'The change would leave the collection restricted with no active key granted can_write',
    NOT_FOUND: 'The collection does not exist, or the key is not an active key of the tenant',
  },
  input: z.object({
    name: collectionName,
    agent_key_id: z.string().describe('Id of an active API key of the tenant (see GET /v1/memory/agents)'),
    can_read: z.boolean(),
    can_write: z.boolean(),
  }),
  output: grantSchema,
  handler: (ctx, { name, ...grant }) => putGrant(ctx, name, grant),
});

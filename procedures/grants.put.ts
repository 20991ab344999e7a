import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { grantSchema } from '../src/schemas/access.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { putGrant } from '../src/services/access/grants.ts';

export default defineProcedure({
  name: 'grants.put',
  summary: 'Grant an agent (API key), a person or a team read and/or write access to a collection; the first grant restricts the collection',
  description:
    'Once a collection has a grant, only the keys, people and teams granted may read (can_read) or write (can_write) it; others get 403 and ' +
    'no longer see it in listings or all-collection search. Name exactly one of agent_key_id, person_id and team_id; a key that acts for a person ' +
    'is granted through that person or a team (400). Managing grants needs an admin key with write access to the collection. ' +
    'Unknown collection, or an id that is not an active key, a person or a team of the tenant: 404.',
  rest: { method: 'PUT', path: '/v1/memory/collections/{name}/grants', status: 200 },
  access: 'write',
  keyRole: 'admin',
  collection: { field: 'name', permission: 'write' },
  errors: {
    BAD_REQUEST: 'Not exactly one grantee, a key that acts for a person, or a change that would leave the collection restricted with nobody able to write it',
    NOT_FOUND: 'The collection does not exist, or the grantee is not an active key, a person or a team of the tenant',
  },
  input: z.object({
    name: collectionName,
    agent_key_id: z.string().optional().describe('Id of an active API key of the tenant (see GET /v1/memory/agents)'),
    person_id: z.string().optional().describe('Id of a person of the tenant (see GET /v1/memory/people)'),
    team_id: z.string().optional().describe('Id of a team of the tenant (see GET /v1/memory/teams)'),
    can_read: z.boolean(),
    can_write: z.boolean(),
  }),
  output: grantSchema,
  handler: (ctx, { name, ...grant }) => putGrant(ctx, name, grant),
});

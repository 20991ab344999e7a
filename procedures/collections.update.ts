import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName, metadataObject } from '../src/schemas/fields.ts';
import { collectionSchema } from '../src/schemas/memory.ts';
import { scopeInput } from '../src/schemas/people.ts';
import { checkedScope } from '../src/services/people/scope.ts';
import { updateCollection } from '../src/services/memory/collections.ts';
import { MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'collections.update',
  summary: "Update a collection's description, metadata and scope (only supplied fields change; the scope is an admin's)",
  rest: { method: 'PUT', path: '/v1/memory/collections/{name}', status: 200 },
  access: 'write',
  collection: { field: 'name', permission: 'write' },
  errors: {
    NOT_FOUND: `${MISSING_COLLECTION}, or the owner or a team is not a person or a team of the tenant`,
    BAD_REQUEST: 'A scope whose owner or teams do not fit it',
    FORBIDDEN: 'A scope change by a caller who is not an admin',
  },
  input: z.object({ name: collectionName, description: z.string().max(2000).nullable().optional(), metadata: metadataObject.optional(), ...scopeInput.shape }),
  output: collectionSchema,
  handler: async (ctx, { scope, owner, teams, ...input }) => updateCollection(ctx, { ...input, scope: await checkedScope(ctx, { scope, owner, teams }, true) }),
});

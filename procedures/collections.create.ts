import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName, metadataObject } from '../src/schemas/fields.ts';
import { collectionSchema } from '../src/schemas/memory.ts';
import { scopeInput } from '../src/schemas/people.ts';
import { checkedScope } from '../src/services/people/scope.ts';
import { createCollection } from '../src/services/memory/collections.ts';

export default defineProcedure({
  name: 'collections.create',
  summary: 'Create a collection (409 if the name exists)',
  rest: { method: 'POST', path: '/v1/memory/collections', status: 201 },
  access: 'write',
  errors: {
    CONFLICT: 'A collection of this name exists',
    BAD_REQUEST: 'A scope whose owner or teams do not fit it (a personal collection for a key of no person without an owner)',
    FORBIDDEN: 'A personal collection for someone else, or a team collection of a team the caller is not in, by a caller who is not an admin',
    NOT_FOUND: 'The owner or a team is not a person or a team of the tenant',
  },
  input: z.object({ name: collectionName, description: z.string().max(2000).nullable().optional(), metadata: metadataObject.optional(), ...scopeInput.shape }),
  output: collectionSchema,
  handler: async (ctx, { scope, owner, teams, ...input }) => createCollection(ctx, { ...input, scope: await checkedScope(ctx, { scope, owner, teams }) }),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName, metadataObject } from '../src/schemas/fields.ts';
import { collectionSchema } from '../src/schemas/memory.ts';
import { createCollection } from '../src/services/memory/collections.ts';

export default defineProcedure({
  name: 'collections.create',
  summary: 'Create a collection (409 if the name exists)',
  rest: { method: 'POST', path: '/v1/memory/collections', status: 201 },
  access: 'write',
  errors: { CONFLICT: 'A collection of this name exists' },
  input: z.object({ name: collectionName, description: z.string().max(2000).nullable().optional(), metadata: metadataObject.optional() }),
  output: collectionSchema,
  handler: (ctx, input) => createCollection(ctx, input),
});

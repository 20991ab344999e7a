import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName, metadataObject } from '../src/schemas/fields.ts';
import { collectionSchema } from '../src/schemas/memory.ts';
import { updateCollection } from '../src/services/memory/collections.ts';
import { MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'collections.update',
  summary: "Update a collection's description and metadata (only supplied fields change)",
  rest: { method: 'PUT', path: '/v1/memory/collections/{name}', status: 200 },
  access: 'write',
  collection: { field: 'name', permission: 'write' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ name: collectionName, description: z.string().max(2000).nullable().optional(), metadata: metadataObject.optional() }),
  output: collectionSchema,
  handler: (ctx, input) => updateCollection(ctx, input),
});

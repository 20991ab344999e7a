import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { collectionSchema } from '../src/schemas/memory.ts';
import { getCollection } from '../src/services/memory/collections.ts';
import { MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'collections.get',
  summary: 'Get one collection',
  rest: { method: 'GET', path: '/v1/memory/collections/{name}', status: 200 },
  access: 'read',
  collection: { field: 'name', permission: 'read' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ name: collectionName }),
  output: collectionSchema,
  handler: (ctx, input) => getCollection(ctx.app.db, ctx.tenant.id, input.name),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName, noContent } from '../src/schemas/fields.ts';
import { deleteCollection } from '../src/services/memory/collections.ts';
import { MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'collections.delete',
  summary: 'Delete a collection with all its memories and files',
  rest: { method: 'DELETE', path: '/v1/memory/collections/{name}', status: 204 },
  access: 'write',
  collection: { field: 'name', permission: 'write' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ name: collectionName }),
  output: noContent,
  handler: async (ctx, input) => {
    await deleteCollection(ctx, input.name);
    return null;
  },
});

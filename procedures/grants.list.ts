import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { grantSchema } from '../src/schemas/access.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { listGrants } from '../src/services/access/grants.ts';
import { MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'grants.list',
  summary: "A collection's grants; an empty list means the collection is open to every key of the tenant",
  rest: { method: 'GET', path: '/v1/memory/collections/{name}/grants', status: 200 },
  access: 'read',
  collection: { field: 'name', permission: 'read' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ name: collectionName }),
  output: z.object({ collection: z.string(), restricted: z.boolean(), grants: z.array(grantSchema) }),
  handler: (ctx, input) => listGrants(ctx, input.name),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { keySchema } from '../src/schemas/access.ts';
import { listKeys } from '../src/services/access/keys.ts';

export default defineProcedure({
  name: 'keys.list',
  summary: "List the tenant's API keys, masked",
  rest: { method: 'GET', path: '/v1/memory/keys', status: 200 },
  access: 'read',
  input: z.object({}),
  output: z.array(keySchema),
  handler: (ctx) => listKeys(ctx.app, ctx.tenant.id),
});

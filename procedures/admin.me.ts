import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
import { tenantSchema } from '../src/schemas/access.ts';

export default defineProcedure({
  name: 'admin.me',
  summary: 'The calling tenant: name, email, tier and limits',
  rest: { method: 'GET', path: '/v1/memory/admin/me', status: 200 },
  access: 'read',
  input: z.object({}),
  output: tenantSchema,
  handler: async (ctx) => ctx.tenant,
});

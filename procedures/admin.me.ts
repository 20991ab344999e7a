import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { keyRole, tenantSchema } from '../src/schemas/access.ts';

export default defineProcedure({
  name: 'admin.me',
  summary: 'The calling tenant (name, email, tier and limits) and the key the call was made with',
  rest: { method: 'GET', path: '/v1/memory/admin/me', status: 200 },
  access: 'read',
  input: z.object({}),
  output: tenantSchema.extend({
    key: z
      .object({ id: z.string(), label: z.string(), role: keyRole, read_only: z.boolean() })
      .describe('The calling API key: an agent key may not change the settings that need an admin key, a read-only one may not write'),
  }),
  handler: async (ctx) => ({ ...ctx.tenant, key: ctx.agent }),
});

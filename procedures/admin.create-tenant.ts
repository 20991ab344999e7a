import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { tenantSchema } from '../src/schemas/access.ts';
import { createTenant } from '../src/services/access/tenants.ts';

export default defineProcedure({
  name: 'admin.createTenant',
  summary: 'Operator: create a tenant and its first API key (shown once); 409 if the email is taken',
  rest: { method: 'POST', path: '/v1/memory/admin/tenants', status: 201 },
  access: 'admin',
  errors: { CONFLICT: 'A tenant with this email exists' },
  input: z.object({
    name: z.string().min(1).max(200),
    email: z.email(),
    tier: z.enum(['free', 'pro', 'enterprise']).default('free'),
    is_admin: z.boolean().default(false),
  }),
  output: z.object({ tenant: tenantSchema, api_key: z.string() }),
  handler: (ctx, input) => createTenant(ctx.app, input),
});

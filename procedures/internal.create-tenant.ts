import { z } from 'zod';
import { validationError } from '../src/core/errors.ts';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { createTenant } from '../src/services/access/tenants.ts';
import adminCreateTenant from './admin.create-tenant.ts';

export default defineProcedure({
  name: 'internal.createTenant',
  summary: 'Local: create a tenant and its first API key, of any tier this server knows (X-Local-Admin-Secret)',
  description:
    "For `orgmem admin create-tenant` on the server's machine while this server holds the embedded data directory, not " +
    'for clients: no API key, the secret this run of `orgmem serve` wrote into the data directory (server.json) in ' +
    "X-Local-Admin-Secret (with PostgreSQL there is none: always 401). `tier` is any of this server's tiers, those " +
    'ORGMEM_TIERS adds included. The key is in this answer only.',
  rest: { method: 'POST', path: '/v1/memory/_internal/tenants', status: 201 },
  access: 'internal',
  secret: { header: 'X-Local-Admin-Secret', value: (config) => config.localAdminSecret },
  errors: adminCreateTenant.errors,
  input: adminCreateTenant.input.extend({
    tier: z.string().default('free').describe("One of this server's tiers (free, pro, enterprise and those of ORGMEM_TIERS)"),
  }),
  output: adminCreateTenant.output,
  handler: (ctx, input) => {
    const tiers = Object.keys(ctx.app.config.tiers) as [string, ...string[]];
    const known = z.object({ tier: z.enum(tiers) }).safeParse({ tier: input.tier });
    if (!known.success) throw validationError(known.error);
    return createTenant(ctx.app, input);
  },
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { keyRole } from '../src/schemas/access.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { createKeyFor } from '../src/services/access/tenants.ts';
import keysCreate from './keys.create.ts';

export default defineProcedure({
  name: 'internal.createKey',
  summary: 'Local: create an API key for a tenant named by name, email or id (X-Local-Admin-Secret)',
  description:
    "For `orgmem admin create-key` on the server's machine while this server holds the embedded data directory, not for " +
    'clients: no API key, the secret this run of `orgmem serve` wrote into the data directory (server.json) in ' +
    'X-Local-Admin-Secret (with PostgreSQL there is none: always 401). The key is in this answer only.',
  rest: { method: 'POST', path: '/v1/memory/_internal/keys', status: 201 },
  access: 'internal',
  secret: { header: 'X-Local-Admin-Secret', value: (config) => config.localAdminSecret },
  errors: { NOT_FOUND: 'No tenant has this name, email or id', CONFLICT: 'Several tenants have this name: the detail lists them, to name one by email or id' },
  input: keysCreate.input.extend({ tenant: z.string().min(1).max(200).describe("The tenant's name, email or id") }),
  output: z.object({
    tenant: z.object({ id: z.string(), name: z.string(), email: z.string() }),
    id: z.string(),
    label: z.string(),
    role: keyRole,
    read_only: z.boolean(),
    created_at: timestamp,
    api_key: z.string(),
  }),
  handler: (ctx, input) => createKeyFor(ctx.app, input.tenant, input.label, input.role, input.read_only),
});

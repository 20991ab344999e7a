import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { keyRole, keySchema } from '../src/schemas/access.ts';
import { setKeyRole } from '../src/services/access/keys.ts';

export default defineProcedure({
  name: 'keys.setRole',
  summary: "Change an API key's role (admin or agent); the tenant's last admin key keeps its role (400)",
  description: 'Takes effect on the key\'s next call. Rotation keeps the role it has then (docs/access.md, "Key roles").',
  rest: { method: 'PUT', path: '/v1/memory/keys/{key_id}/role', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: {
    BAD_REQUEST: 'It would take the admin role from the last active admin key of the tenant',
    NOT_FOUND: 'No active key of this tenant has this id',
  },
  input: z.object({ key_id: z.string(), role: keyRole }),
  output: keySchema,
  handler: (ctx, input) => setKeyRole(ctx.app, ctx.tenant.id, input.key_id, input.role),
});

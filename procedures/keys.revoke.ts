import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { revokeKey } from '../src/services/access/keys.ts';

export default defineProcedure({
  name: 'keys.revoke',
  summary: 'Revoke an API key (soft); the last active key cannot be revoked (400)',
  rest: { method: 'DELETE', path: '/v1/memory/keys/{key_id}', status: 204 },
  access: 'write',
  keyRole: 'admin',
  errors: { BAD_REQUEST: 'It is the last active key of the tenant', NOT_FOUND: 'No key of this tenant has this id' },
  input: z.object({ key_id: z.string() }),
  output: noContent,
  handler: async (ctx, input) => {
    await revokeKey(ctx.app, ctx.tenant.id, input.key_id);
    return null;
  },
});

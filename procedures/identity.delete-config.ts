import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteIdentityConfig } from '../src/services/people/identity-config.ts';

export default defineProcedure({
  name: 'identity.deleteConfig',
  summary: 'Remove the OpenID Connect provider: nobody signs in through it any more (sessions already open run to their end)',
  rest: { method: 'DELETE', path: '/v1/memory/identity/config', status: 204 },
  access: 'write',
  keyRole: 'admin',
  errors: { NOT_FOUND: 'No identity provider is configured' },
  input: z.object({}),
  output: noContent,
  handler: async (ctx) => {
    await deleteIdentityConfig(ctx);
    return null;
  },
});

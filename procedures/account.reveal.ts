import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { tenantSchema } from '../src/schemas/access.ts';
import { reveal } from '../src/services/access/signup.ts';

export default defineProcedure({
  name: 'account.reveal',
  summary: 'Public: open a mailed link once; answers a new API key and its tenant. Unknown, used or expired: 404',
  rest: { method: 'GET', path: '/v1/memory/reveal/{token}', status: 200 },
  access: 'public',
  errors: { NOT_FOUND: 'The link is unknown, already used or expired' },
  input: z.object({ token: z.string().max(200) }),
  output: z.object({ api_key: z.string(), tenant: tenantSchema }),
  handler: (ctx, input) => reveal(ctx, input.token),
});

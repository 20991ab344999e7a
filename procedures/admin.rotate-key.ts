import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { rotateKey } from '../src/services/access/keys.ts';

export default defineProcedure({
  name: 'admin.rotateKey',
  summary: 'Replace the calling key: a new key is returned once and the calling key stops working at once',
  rest: { method: 'POST', path: '/v1/memory/admin/rotate-key', status: 200 },
  access: 'write',
  input: z.object({}),
  output: z.object({ id: z.string(), api_key: z.string() }),
  handler: (ctx) => rotateKey(ctx.app, ctx.tenant.id, ctx.agent),
});

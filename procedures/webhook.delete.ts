import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteWebhook } from '../src/services/events/webhooks.ts';

export default defineProcedure({
  name: 'webhook.delete',
  summary: 'Remove the outbound webhook; events stop at once (404 when none is configured)',
  rest: { method: 'DELETE', path: '/v1/memory/webhook/config', status: 204 },
  access: 'write',
  keyRole: 'admin',
  errors: { NOT_FOUND: 'No webhook is configured' },
  input: z.object({}),
  output: noContent,
  handler: async (ctx) => {
    await deleteWebhook(ctx);
    return null;
  },
});

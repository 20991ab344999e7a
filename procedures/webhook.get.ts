import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { getWebhook } from '../src/services/events/webhooks.ts';

export default defineProcedure({
  name: 'webhook.get',
  summary: 'The outbound webhook (without its secret); 404 when none is configured',
  rest: { method: 'GET', path: '/v1/memory/webhook/config', status: 200 },
  access: 'read',
  errors: { NOT_FOUND: 'No webhook is configured' },
  input: z.object({}),
  output: z.object({ url: z.string(), created_at: timestamp }),
  handler: (ctx) => getWebhook(ctx),
});

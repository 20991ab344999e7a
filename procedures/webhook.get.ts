import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { webhookView } from '../src/schemas/webhooks.ts';
import { getWebhook } from '../src/services/events/webhooks.ts';

export default defineProcedure({
  name: 'webhook.get',
  summary: 'The outbound webhook (without its secret) and how its deliveries go: state, failures, back-off, suspension, waiting events and dead letters',
  rest: { method: 'GET', path: '/v1/memory/webhook/config', status: 200 },
  access: 'read',
  input: z.object({}),
  output: webhookView,
  handler: (ctx) => getWebhook(ctx),
});

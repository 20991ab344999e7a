import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { webhookView } from '../src/schemas/webhooks.ts';
import { resumeWebhook } from '../src/services/events/webhooks.ts';

export default defineProcedure({
  name: 'webhook.resume',
  summary: 'End a suspension or a back-off of the webhook: deliveries start again at once (dead letters stay until replayed)',
  rest: { method: 'POST', path: '/v1/memory/webhook/resume', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { NOT_FOUND: 'No webhook is configured' },
  input: z.object({}),
  output: webhookView,
  handler: (ctx) => resumeWebhook(ctx),
});

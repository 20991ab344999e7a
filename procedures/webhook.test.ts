import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { testDelivery } from '../src/schemas/webhooks.ts';
import { testWebhook } from '../src/services/events/webhooks.ts';

export default defineProcedure({
  name: 'webhook.test',
  summary: 'Send one signed webhook.test event now and answer how it went; a success resumes a suspended or backed-off webhook',
  rest: { method: 'POST', path: '/v1/memory/webhook/test', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { NOT_FOUND: 'No webhook is configured' },
  input: z.object({}),
  output: testDelivery,
  handler: (ctx) => testWebhook(ctx),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { getWebhook } from '../src/services/events/webhooks.ts';

export default defineProcedure({
  name: 'webhook.get',
  summary: 'The outbound webhook (without its secret) and how its deliveries went; every field is null when none is configured',
  rest: { method: 'GET', path: '/v1/memory/webhook/config', status: 200 },
  access: 'read',
  input: z.object({}),
  output: z.object({
    url: z.string().nullable().describe('Where the events are sent; null when no webhook is configured'),
    created_at: timestamp.nullable(),
    last_delivered_at: timestamp.nullable().describe('When an event was last delivered (a 2xx answer)'),
    last_error: z
      .string()
      .nullable()
      .describe('Why the last failed try failed (a refused target, a status, a timeout); each try is recorded, so a later success does not clear it'),
    last_error_at: timestamp.nullable(),
  }),
  handler: (ctx) => getWebhook(ctx),
});

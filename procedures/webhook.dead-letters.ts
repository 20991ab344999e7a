import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { deadLetterList } from '../src/schemas/webhooks.ts';
import { listDeadLetters } from '../src/services/events/webhook-outbox.ts';

export default defineProcedure({
  name: 'webhook.deadLetters',
  summary: 'Webhook events given up on (out of tries, or while the webhook was suspended), newest first; kept 7 days, at most 10,000',
  rest: { method: 'GET', path: '/v1/memory/webhook/dead-letters', status: 200 },
  access: 'read',
  keyRole: 'admin',
  input: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50).describe('1 to 200, default 50') }),
  output: deadLetterList,
  handler: (ctx, input) => listDeadLetters(ctx.app, ctx.tenant.id, input.limit),
});

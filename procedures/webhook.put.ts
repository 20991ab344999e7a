import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { putWebhook } from '../src/services/events/webhooks.ts';

export default defineProcedure({
  name: 'webhook.put',
  summary: 'Set the outbound webhook; a new signing secret is generated and shown only in this answer',
  description:
    'Events memory.created, memory.updated and memory.deleted are POSTed as {id, type, created_at, data: {collection, memory}} ' +
    'with X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed with the secret>, X-Service-Event and ' +
    'X-Service-Delivery (the event id), one at a time, oldest first. A try has 5 s; an event has 3 tries, then it is a dead letter; ' +
    'failing tries back the webhook off, and 10 in a row suspend it. Only http(s) URLs; in production mode ' +
    'private and loopback targets are refused (400) unless the operator allows them. Every PUT resumes the webhook.',
  rest: { method: 'PUT', path: '/v1/memory/webhook/config', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { BAD_REQUEST: '(Production mode) the URL is a private or loopback address, or its host cannot be resolved' },
  input: z.object({
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .describe('http(s) URL receiving the events'),
  }),
  output: z.object({ url: z.string(), secret: z.string().describe('The signing secret; shown only here') }),
  handler: (ctx, input) => putWebhook(ctx, input.url),
});

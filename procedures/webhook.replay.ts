import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { replayDeadLetters } from '../src/services/events/webhook-outbox.ts';

export default defineProcedure({
  name: 'webhook.replay',
  summary: 'Deliver dead letters again (the named ones, or all when `ids` is omitted), as new events with their tries afresh',
  rest: { method: 'POST', path: '/v1/memory/webhook/dead-letters/replay', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { CONFLICT: 'The webhook is suspended: resume it first (POST /v1/memory/webhook/resume)' },
  input: z.object({ ids: z.array(z.uuid()).min(1).max(1000).optional().describe('Dead letters to replay (their event ids); all when omitted') }),
  output: z.object({ replayed: z.number().int().describe('Events put back in the outbox') }),
  handler: async (ctx, input) => ({ replayed: await replayDeadLetters(ctx.app, ctx.tenant.id, input.ids) }),
});

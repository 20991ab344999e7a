import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { queueStalled } from '../src/services/status/pipeline.ts';

export default defineProcedure({
  name: 'system.health',
  summary: 'Liveness probe (public)',
  description:
    'healthy, or degraded (still 200) when the background queue is not draining: some work has been queued or ' +
    'processing for over 15 minutes, or the database cannot be asked. No tenant data.',
  rest: { method: 'GET', path: '/v1/memory/health', status: 200 },
  access: 'public',
  input: z.object({}),
  output: z.object({ status: z.enum(['healthy', 'degraded']) }),
  handler: async (ctx) => {
    // The process answers either way: a liveness probe must not fail on the database's account.
    const stalled = await queueStalled(ctx.app).catch((err: unknown) => {
      ctx.app.log.warn({ err }, 'health: the job queue could not be checked');
      return true;
    });
    return { status: stalled ? ('degraded' as const) : ('healthy' as const) };
  },
});

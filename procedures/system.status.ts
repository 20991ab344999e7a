import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
import { statusReport } from '../src/services/status/checks.ts';

export default defineProcedure({
  name: 'system.status',
  summary: 'Service status: current state, 24 h uptime and recent self-checks (public, no tenant data)',
  rest: { method: 'GET', path: '/v1/status', status: 200 },
  access: 'public',
  input: z.object({}),
  output: z.object({
    status: z.enum(['operational', 'down']),
    checked_at: z.string(),
    database_latency_ms: z.number(),
    uptime_24h: z.number().nullable().describe('Percentage of passing self-checks in the last 24 h; null before the first check'),
    recent_checks: z.array(z.object({ checked_at: z.string(), ok: z.boolean(), latency_ms: z.number() })),
  }),
  handler: (ctx) => statusReport(ctx.app),
});

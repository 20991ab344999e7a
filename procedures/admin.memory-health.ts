import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memoryHealth } from '../src/services/operator/memory-health.ts';

const count = z.number().int();

export default defineProcedure({
  name: 'admin.memoryHealth',
  summary: 'Operator: collection health summed over every collection of every tenant (counts only)',
  description:
    "The counts of a collection's health (GET …/collections/{collection}/health, same definitions) over all memories of " +
    'all tenants: total; current (neither superseded nor expired); archived; stale (not pinned, not archived, updated_at ' +
    'older than stale_days); expired; supersessions (superseded memories); needs_attention = stale + expired + supersessions.',
  rest: { method: 'GET', path: '/v1/memory/admin/memory-health', status: 200 },
  access: 'admin',
  input: z.object({ stale_days: z.coerce.number().int().min(0).default(90).describe('default 90, as collection health') }),
  output: z.object({
    stale_days: count,
    total: count,
    current: count,
    archived: count,
    stale: count,
    expired: count,
    supersessions: count,
    needs_attention: count,
  }),
  handler: (ctx, input) => memoryHealth(ctx.app, input.stale_days),
});

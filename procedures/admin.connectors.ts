import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { provider } from '../src/schemas/connectors.ts';
import { connectorHealth } from '../src/services/connectors/operator.ts';

export default defineProcedure({
  name: 'admin.connectors',
  summary: 'Operator: connector syncs per provider across tenants (runs, failed runs, last run) over the last hours',
  rest: { method: 'GET', path: '/v1/memory/admin/connectors', status: 200 },
  access: 'admin',
  input: z.object({
    hours: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 90)
      .default(24)
      .describe('1 to 2160, default 24'),
  }),
  output: z.object({
    hours: z.number().int(),
    providers: z.array(z.object({ provider, runs: z.number().int(), errors: z.number().int(), last_run: z.string().nullable() })),
  }),
  handler: (ctx, input) => connectorHealth(ctx.app, input.hours),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { connectionStatus } from '../src/schemas/connectors.ts';
import { connectionStatusCounts } from '../src/services/connectors/operator.ts';

export default defineProcedure({
  name: 'admin.connectorsStatus',
  summary: 'Operator: how many connections are active, in error or paused, across tenants',
  rest: { method: 'GET', path: '/v1/memory/admin/connectors/status', status: 200 },
  access: 'admin',
  input: z.object({}),
  output: z.array(z.object({ status: connectionStatus, n: z.number().int() })),
  handler: (ctx) => connectionStatusCounts(ctx.app),
});

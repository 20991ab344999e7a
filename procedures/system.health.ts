import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';

export default defineProcedure({
  name: 'system.health',
  summary: 'Liveness probe (public)',
  rest: { method: 'GET', path: '/v1/memory/health', status: 200 },
  access: 'public',
  input: z.object({}),
  output: z.object({ status: z.literal('healthy') }),
  handler: async () => ({ status: 'healthy' as const }),
});

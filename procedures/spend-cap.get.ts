import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { spendCapView } from '../src/schemas/llm.ts';
import { getSpendCap } from '../src/services/llm/spend-cap.ts';

export default defineProcedure({
  name: 'spendCap.get',
  summary: "The monthly cap on platform LLM spend and this month's spend",
  rest: { method: 'GET', path: '/v1/memory/spend-cap', status: 200 },
  access: 'read',
  input: z.object({}),
  output: spendCapView,
  handler: (ctx) => getSpendCap(ctx),
});

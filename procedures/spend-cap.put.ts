import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { spendCapView } from '../src/schemas/llm.ts';
import { putSpendCap } from '../src/services/llm/spend-cap.ts';

export default defineProcedure({
  name: 'spendCap.put',
  summary: 'Set (or clear, with null) the monthly cap on platform LLM spend',
  description:
    'At or over the cap, remember stores the raw memory and skips extraction (the job ends done, skipped "spend_cap"), ' +
    'and summary, profile and search rewrite/rerank answer without the LLM until the month turns. Tenants with their own ' +
    'extraction config are never capped.',
  rest: { method: 'PUT', path: '/v1/memory/spend-cap', status: 200 },
  access: 'write',
  keyRole: 'admin',
  input: z.object({ monthly_usd: z.number().min(0).nullable() }),
  output: spendCapView,
  handler: (ctx, input) => putSpendCap(ctx, input.monthly_usd),
});

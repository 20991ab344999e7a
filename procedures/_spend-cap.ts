import { z } from 'zod';

export const spendCapView = z
  .object({
    monthly_usd: z.number().nullable().describe('null: no cap'),
    spent_this_month_usd: z.number().describe('Estimated cost of the platform\'s LLM calls for this tenant since the 1st (UTC)'),
    over_cap: z.boolean(),
  })
  .openapi('SpendCap');

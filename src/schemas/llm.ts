import { z } from 'zod';
import { timestamp } from './fields.ts';

/** The tenant's LLM settings: its own extraction endpoint and the spend cap on the operator's (docs/llm-calls.md). */
export const extractionConfigView = z
  .object({
    configured: z.boolean().describe('Whether the tenant has its own config'),
    provider: z.literal('custom').nullable(),
    base_url: z.string().nullable(),
    model: z.string().nullable(),
    api_key_set: z.boolean().describe('The key itself is never returned'),
    created_at: timestamp.nullable(),
    updated_at: timestamp.nullable(),
    source: z
      .enum(['tenant', 'server', 'platform', 'none'])
      .describe("The endpoint extraction uses now: the tenant's, the server override, the platform default, or none (heuristics)"),
  })
  .openapi('ExtractionConfig');

export const spendCapView = z
  .object({
    monthly_usd: z.number().nullable().describe('null: no cap'),
    spent_this_month_usd: z.number().describe("Estimated cost of the platform's LLM calls for this tenant since the 1st (UTC)"),
    over_cap: z.boolean(),
  })
  .openapi('SpendCap');

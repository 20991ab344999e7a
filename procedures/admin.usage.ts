import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { usageReport } from '../src/services/operator/usage.ts';

export default defineProcedure({
  name: 'admin.usage',
  summary: 'Operator: bytes stored and LLM tokens and cost by purpose and model, across tenants or for one',
  description:
    "Without tenant_id, the whole platform: every tenant's stored bytes and LLM calls (aggregates only). " +
    "With tenant_id, that tenant only (the caller's own included); an unknown id answers zeros. storage_bytes: memory " +
    'texts, metadata and attached file sizes now (as admin/stats). llm: the calls of the last `days` whole UTC days (today ' +
    'included), summed by purpose and model; cost_usd as recorded with each call from the configured price table ' +
    "(ORGMEM_LLM_PRICES), whichever endpoint served it (a tenant's own included).",
  rest: { method: 'GET', path: '/v1/memory/admin/usage', status: 200 },
  access: 'admin',
  input: z.object({
    days: z.coerce.number().int().min(1).max(3650).default(30).describe('1 to 3650, default 30'),
    tenant_id: z.uuid().optional().describe('One tenant (default: all tenants)'),
  }),
  output: z.object({
    days: z.number().int(),
    storage_bytes: z.number(),
    llm: z.array(
      z.object({
        purpose: z.string(),
        model: z.string(),
        prompt_tokens: z.number().int(),
        completion_tokens: z.number().int(),
        cost_usd: z.number(),
      }),
    ),
    total_cost_usd: z.number(),
  }),
  handler: (ctx, input) => usageReport(ctx.app, input.days, input.tenant_id ?? null),
});

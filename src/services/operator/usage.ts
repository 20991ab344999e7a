import type { App } from '../../core/context.ts';
import { STORAGE_BYTES } from '../access/account.ts';
import { windowStart } from './window.ts';

const usd = (n: number) => Math.round(n * 1e6) / 1e6;

/**
 * Usage across every tenant, or of one (`tenantId`): the bytes stored now, and the LLM calls of
 * the window by purpose and model with their cost. Costs are those recorded with each call
 * (llm/usage.ts: the configured price table, ORGMEM_LLM_PRICES), whoever's endpoint served it.
 */
export async function usageReport(app: App, days: number, tenantId: string | null) {
  const tenant = (col: string, n: number) => (tenantId ? `and ${col} = $${n}` : '');
  const params = tenantId ? [days, tenantId] : [days];
  const [[storage], llm] = await Promise.all([
    app.platform.query<{ storage_bytes: number }>(
      `select ${STORAGE_BYTES} as storage_bytes from memories m where true ${tenant('m.tenant_id', 1)}`,
      tenantId ? [tenantId] : [],
    ),
    app.platform.query<{ purpose: string; model: string; prompt_tokens: number; completion_tokens: number; cost_usd: number }>(
      `select purpose, model, sum(prompt_tokens)::float8 as prompt_tokens, sum(completion_tokens)::float8 as completion_tokens,
              sum(cost_usd)::float8 as cost_usd
         from llm_usage where at >= ${windowStart(1)} ${tenant('tenant_id', 2)}
        group by purpose, model order by purpose, model`,
      params,
    ),
  ]);
  return {
    days,
    storage_bytes: storage!.storage_bytes,
    llm: llm.map((r) => ({ ...r, cost_usd: usd(r.cost_usd) })),
    total_cost_usd: usd(llm.reduce((sum, r) => sum + r.cost_usd, 0)),
  };
}

import type { App, AuthedCtx } from '../../core/context.ts';
import { operatorSpendThisMonth } from './usage.ts';

const capOf = async (app: App, tenantId: string) =>
  (await app.platform.query<{ monthly_usd: number }>('select monthly_usd from spend_caps where tenant_id = $1', [tenantId]))[0]?.monthly_usd ?? null;

/**
 * At or over the cap, the operator's LLM endpoints (server override, platform default) are not
 * used for this tenant until the month turns. Spend on the tenant's own endpoint never counts.
 */
export async function isOverSpendCap(app: App, tenantId: string): Promise<boolean> {
  const cap = await capOf(app, tenantId);
  return cap !== null && (await operatorSpendThisMonth(app, tenantId)) >= cap;
}

export async function getSpendCap(ctx: AuthedCtx) {
  const [cap, spent] = await Promise.all([capOf(ctx.app, ctx.tenant.id), operatorSpendThisMonth(ctx.app, ctx.tenant.id)]);
  return { monthly_usd: cap, spent_this_month_usd: spent, over_cap: cap !== null && spent >= cap };
}

/** `null` clears the cap. */
export async function putSpendCap(ctx: AuthedCtx, monthlyUsd: number | null) {
  if (monthlyUsd === null) await ctx.app.platform.query('delete from spend_caps where tenant_id = $1', [ctx.tenant.id]);
  else {
    await ctx.app.platform.query(
      `insert into spend_caps (tenant_id, monthly_usd) values ($1, $2)
       on conflict (tenant_id) do update set monthly_usd = excluded.monthly_usd, updated_at = excluded.updated_at`,
      [ctx.tenant.id, monthlyUsd],
    );
  }
  return getSpendCap(ctx);
}

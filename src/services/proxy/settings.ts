import type { AuthedCtx } from '../../core/context.ts';

/*
 * The proxy's tenant settings (docs/proxy.md, "Long threads"): the thread budget of a request that
 * sets none. A request's own max_thread_tokens overrides it.
 */

export interface ProxySettings {
  max_thread_tokens: number | null;
}

export async function getProxySettings(ctx: AuthedCtx): Promise<ProxySettings> {
  const [row] = await ctx.app.platform.query<ProxySettings>('select max_thread_tokens from proxy_settings where tenant_id = $1', [ctx.tenant.id]);
  return { max_thread_tokens: row?.max_thread_tokens ?? null };
}

/** `null` clears the budget: threads are forwarded whole unless a request sets one. */
export async function putProxySettings(ctx: AuthedCtx, settings: ProxySettings): Promise<ProxySettings> {
  await ctx.app.platform.query(
    `insert into proxy_settings (tenant_id, max_thread_tokens) values ($1, $2)
     on conflict (tenant_id) do update set max_thread_tokens = excluded.max_thread_tokens, updated_at = excluded.updated_at`,
    [ctx.tenant.id, settings.max_thread_tokens],
  );
  return getProxySettings(ctx);
}

/** The budget a request trims to: its own, else the tenant's default, else none. */
export async function threadBudget(ctx: AuthedCtx, requested: number | undefined): Promise<number | undefined> {
  if (requested !== undefined) return requested;
  return (await getProxySettings(ctx)).max_thread_tokens ?? undefined;
}

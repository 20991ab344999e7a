import type { AuthedCtx } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';

export interface SenderEntry {
  sender: string;
  /** The account email: always allowed, not part of the stored list. */
  default: boolean;
}

/** The allowlist as GET shows it: the account email first (default: true), then the stored entries. */
export async function listSenders(ctx: AuthedCtx): Promise<{ senders: SenderEntry[] }> {
  const rows = await ctx.app.platform.query<{ sender: string }>('select sender from email_senders where tenant_id = $1 order by sender', [ctx.tenant.id]);
  return { senders: [{ sender: ctx.tenant.email.toLowerCase(), default: true }, ...rows.map((r) => ({ sender: r.sender, default: false }))] };
}

/**
 * Replaces the stored list (entries already lowercased and checked by the schema). The account
 * email is always allowed, so it is not stored again.
 */
export async function putSenders(ctx: AuthedCtx, senders: string[]): Promise<{ senders: SenderEntry[] }> {
  const own = ctx.tenant.email.toLowerCase();
  const list = [...new Set(senders)].filter((s) => s !== own);
  await ctx.app.platform.transaction(async (tx) => {
    await tx.query('delete from email_senders where tenant_id = $1', [ctx.tenant.id]);
    if (list.length) {
      await tx.query('insert into email_senders (tenant_id, sender) select $1, unnest($2::text[]) on conflict do nothing', [ctx.tenant.id, list]);
    }
  });
  return listSenders(ctx);
}

/** Whether mail from `address` may reach the tenant: its account email, a listed address, or a listed `@domain`. */
export async function senderAllowed(q: Queryable, tenant: { id: string; email: string }, address: string): Promise<boolean> {
  const from = address.toLowerCase();
  if (from === tenant.email.toLowerCase()) return true;
  const at = from.lastIndexOf('@');
  if (at <= 0) return false;
  const rows = await q.query('select 1 from email_senders where tenant_id = $1 and sender in ($2, $3) limit 1', [tenant.id, from, from.slice(at)]);
  return rows.length > 0;
}

import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { AuthedCtx } from '../../core/context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { iso, newId } from '../../core/ids.ts';
import { checkTargetUrl, PrivateTargetError, targetRule } from '../../ports/public-target.ts';
import type { testDelivery, webhookView } from '../../schemas/webhooks.ts';
import { enqueueFlush, outboxCounts, resumeDeliveries, sendSigned } from './webhook-outbox.ts';

/**
 * Sets the tenant's webhook; every PUT generates a new signing secret, returned only here, and
 * starts its deliveries afresh (no back-off, not suspended), sending what waits in its outbox.
 */
export async function putWebhook(ctx: AuthedCtx, url: string): Promise<{ url: string; secret: string }> {
  try {
    await checkTargetUrl(targetRule(ctx.app.config), new URL(url));
  } catch (err) {
    const reason = err instanceof PrivateTargetError ? err.message : `the host cannot be resolved (${(err as Error).message})`;
    throw badRequest(`Webhook URL refused: ${reason}`);
  }
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  await ctx.app.platform.transaction(async (tx) => {
    await tx.query(
      `insert into webhooks (tenant_id, url, secret_sealed) values ($1, $2, $3)
       on conflict (tenant_id) do update set url = excluded.url, secret_sealed = excluded.secret_sealed, created_at = excluded.created_at,
         last_delivered_at = null, last_error = null, last_error_at = null, failures = 0, next_try_at = null, suspended_at = null, suspended_reason = null`,
      [ctx.tenant.id, url, ctx.app.secrets.encrypt(secret)],
    );
    await enqueueFlush(ctx.app, tx, ctx.tenant.id);
  });
  return { url, secret };
}

/**
 * The webhook and how its deliveries go, or nulls when none is set: having none is a state to
 * show, not a missing resource.
 */
export async function getWebhook(ctx: AuthedCtx): Promise<z.infer<typeof webhookView>> {
  const [row] = await ctx.app.platform.query<{
    url: string;
    created_at: Date;
    last_delivered_at: Date | null;
    last_error: string | null;
    last_error_at: Date | null;
    failures: number;
    next_try_at: Date | null;
    suspended_at: Date | null;
    suspended_reason: string | null;
  }>(
    `select url, created_at, last_delivered_at, last_error, last_error_at, failures, next_try_at, suspended_at, suspended_reason
       from webhooks where tenant_id = $1`,
    [ctx.tenant.id],
  );
  const counts = await outboxCounts(ctx.app, ctx.tenant.id);
  const backingOff = !!row?.next_try_at && row.next_try_at.getTime() > Date.now();
  return {
    url: row?.url ?? null,
    created_at: iso(row?.created_at),
    state: !row ? 'none' : row.suspended_at ? 'suspended' : backingOff ? 'backing_off' : 'active',
    last_delivered_at: iso(row?.last_delivered_at),
    last_error: row?.last_error ?? null,
    last_error_at: iso(row?.last_error_at),
    failures: row?.failures ?? 0,
    next_try_at: backingOff ? iso(row?.next_try_at) : null,
    suspended_at: iso(row?.suspended_at),
    suspended_reason: row?.suspended_reason ?? null,
    ...counts,
  };
}

/** Removes the webhook; its waiting events and dead letters go with it. */
export async function deleteWebhook(ctx: AuthedCtx): Promise<void> {
  const removed = await ctx.app.platform.transaction(async (tx) => {
    const rows = await tx.query('delete from webhooks where tenant_id = $1 returning tenant_id', [ctx.tenant.id]);
    await tx.query('delete from webhook_events where tenant_id = $1', [ctx.tenant.id]);
    return rows.length;
  });
  if (!removed) throw notFound('No webhook is configured');
}

/** Ends a suspension or a back-off at once. */
export async function resumeWebhook(ctx: AuthedCtx): Promise<z.infer<typeof webhookView>> {
  if (!(await resumeDeliveries(ctx.app, ctx.tenant.id))) throw notFound('No webhook is configured');
  return getWebhook(ctx);
}

/**
 * Sends one `webhook.test` event now, signed like any other, and answers how it went. A success
 * resumes a suspended or backed-off webhook; a failure changes nothing.
 */
export async function testWebhook(ctx: AuthedCtx): Promise<z.infer<typeof testDelivery>> {
  const [hook] = await ctx.app.platform.query<{ url: string; secret_sealed: string; held: boolean }>(
    `select url, secret_sealed, (suspended_at is not null or next_try_at > now()) as held from webhooks where tenant_id = $1`,
    [ctx.tenant.id],
  );
  if (!hook) throw notFound('No webhook is configured');
  const event = { id: newId(), type: 'webhook.test', created_at: new Date().toISOString(), data: {} };
  const outcome = await sendSigned(ctx.app, hook, JSON.stringify(event), event.type, event.id);
  if (!outcome.delivered) return { delivered: false, status: outcome.status, error: outcome.error, resumed: false };
  const resumed = hook.held && (await resumeDeliveries(ctx.app, ctx.tenant.id));
  return { delivered: true, status: outcome.status, error: null, resumed };
}

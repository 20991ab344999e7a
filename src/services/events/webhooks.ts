import { createHmac, randomBytes } from 'node:crypto';
import type { App, AuthedCtx } from '../../core/context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import { checkTargetUrl, PrivateTargetError, targetRule } from '../../ports/public-target.ts';
import { postWebhook, WEBHOOK_TIMEOUT_MS } from './webhook-http.ts';

/** Sets the tenant's webhook; every PUT generates a new signing secret, returned only here. */
export async function putWebhook(ctx: AuthedCtx, url: string): Promise<{ url: string; secret: string }> {
  try {
    await checkTargetUrl(targetRule(ctx.app.config), new URL(url));
  } catch (err) {
    const reason = err instanceof PrivateTargetError ? err.message : `the host cannot be resolved (${(err as Error).message})`;
    throw badRequest(`Webhook URL refused: ${reason}`);
  }
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  await ctx.app.platform.query(
    `insert into webhooks (tenant_id, url, secret_sealed) values ($1, $2, $3)
     on conflict (tenant_id) do update set url = excluded.url, secret_sealed = excluded.secret_sealed, created_at = excluded.created_at,
       last_delivered_at = null, last_error = null, last_error_at = null`,
    [ctx.tenant.id, url, ctx.app.secrets.encrypt(secret)],
  );
  return { url, secret };
}

/**
 * The webhook and how its deliveries went, or nulls when none is set: having none is a state to
 * show, not a missing resource.
 */
export async function getWebhook(ctx: AuthedCtx) {
  const [row] = await ctx.app.platform.query<{
    url: string;
    created_at: Date;
    last_delivered_at: Date | null;
    last_error: string | null;
    last_error_at: Date | null;
  }>('select url, created_at, last_delivered_at, last_error, last_error_at from webhooks where tenant_id = $1', [ctx.tenant.id]);
  return {
    url: row?.url ?? null,
    created_at: iso(row?.created_at),
    last_delivered_at: iso(row?.last_delivered_at),
    last_error: row?.last_error ?? null,
    last_error_at: iso(row?.last_error_at),
  };
}

export async function deleteWebhook(ctx: AuthedCtx): Promise<void> {
  const rows = await ctx.app.platform.query('delete from webhooks where tenant_id = $1 returning tenant_id', [ctx.tenant.id]);
  if (!rows.length) throw notFound('No webhook is configured');
}

/** `sha256=<hex HMAC-SHA256 of the raw body>` keyed with the signing secret. */
export const signature = (secret: string, raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

/**
 * Delivers one event to the tenant's current webhook (the one configured when the job runs;
 * none left means nothing to do). A non-2xx answer or a timeout throws, so the job retries. Each
 * outcome is recorded on the webhook, where the tenant reads it (`GET /v1/memory/webhook/config`):
 * a failure as a sentence (never the receiver's body), a success as its time.
 */
export async function deliverEvent(app: App, tenantId: string, event: { id: string; type: string }): Promise<void> {
  const [hook] = await app.platform.query<{ url: string; secret_sealed: string }>('select url, secret_sealed from webhooks where tenant_id = $1', [tenantId]);
  if (!hook) return;
  const raw = JSON.stringify(event);
  // Recorded against the URL the try used: a webhook changed meanwhile keeps its own state.
  const note = (error: string | null) =>
    app.platform.query(
      error === null
        ? 'update webhooks set last_delivered_at = now() where tenant_id = $1 and url = $2'
        : 'update webhooks set last_error = $3, last_error_at = now() where tenant_id = $1 and url = $2',
      error === null ? [tenantId, hook.url] : [tenantId, hook.url, error],
    );
  let status: number;
  try {
    status = await postWebhook(
      hook.url,
      raw,
      {
        'X-Service-Signature': signature(app.secrets.decrypt(hook.secret_sealed), raw),
        'X-Service-Event': event.type,
        'X-Service-Delivery': event.id,
      },
      targetRule(app.config),
    );
  } catch (err) {
    // A refused target stays refused: drop the event instead of retrying it.
    if (err instanceof PrivateTargetError) {
      app.log.warn({ tenantId, event: event.id, reason: err.message }, 'webhook target refused');
      await note(`Event ${event.id} (${event.type}) was dropped: the target is refused, ${err.message}`);
      return;
    }
    const timedOut = (err as Error).name === 'TimeoutError';
    await note(`Event ${event.id} (${event.type}) failed: ${timedOut ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : 'the target could not be reached'}`);
    throw err;
  }
  if (status < 200 || status >= 300) {
    await note(`Event ${event.id} (${event.type}) failed: the target answered ${status}`);
    throw new Error(`webhook answered ${status}`);
  }
  await note(null);
}

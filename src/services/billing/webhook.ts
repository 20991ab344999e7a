import Stripe from 'stripe';
import { z } from 'zod';
import type { PublicCtx } from '../../core/context.ts';
import { badRequest } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { setTenantTier } from '../access/tenants.ts';
import { appendAudit } from '../events/audit.ts';
import { lockBillingAccount, recordStripeEvent, saveBillingAccount, tenantOfCustomer } from './accounts.ts';
import { BILLING_EVENTS, billingChange, type BillingChange } from './changes.ts';
import { stripeSettings } from './stripe.ts';

// The envelope of every event; what its object holds depends on the type (changes.ts).
const stripeEvent = z.object({
  id: z.string().min(1),
  type: z.string(),
  created: z.number().int().min(0).max(8.64e12),
  data: z.object({ object: z.unknown() }),
});

/** How old a signature's timestamp may be (Stripe's own default): an older delivery is refused as a replay. */
const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface WebhookAnswer {
  received: true;
  duplicate?: true;
  /** What the event did, shown in Stripe's delivery log. */
  outcome: string;
}

/**
 * One delivery of Stripe's webhook: the signature checked over the body as it arrived, then the
 * event acted on once. A replay of an event already acted on is answered 200 `duplicate` and
 * does nothing: a 4xx would only make Stripe retry it for days.
 */
export async function receiveStripeEvent(ctx: PublicCtx, payload: string, signature: string | undefined): Promise<WebhookAnswer> {
  const settings = stripeSettings(ctx.app);
  if (!signature) throw badRequest('Missing Stripe-Signature header: only deliveries signed by Stripe are taken');
  let signed: unknown;
  try {
    signed = Stripe.webhooks.constructEvent(payload, signature, settings.webhookSecret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) throw badRequest(`Stripe-Signature does not verify: ${err.message}`);
    // Verified, then not JSON: only the secret's holder could have sent it.
    throw badRequest(`The body is not a Stripe event: ${(err as Error).message}`);
  }
  const parsed = stripeEvent.safeParse(signed);
  if (!parsed.success) throw badRequest(`The body is not a Stripe event (${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message})`);
  const event = parsed.data;
  if (!BILLING_EVENTS.includes(event.type)) return { received: true, outcome: `ignored: orgmem does not act on ${event.type}` };
  const change = billingChange(event.type, event.data.object, settings);
  const at = new Date(event.created * 1000);
  return ctx.app.platform.transaction(async (tx) => {
    if (!(await recordStripeEvent(tx, event.id, event.type))) return { received: true, duplicate: true, outcome: 'already processed' };
    const outcome = await apply(tx, change, { id: event.id, type: event.type, at });
    ctx.app.log.info({ event: event.id, type: event.type, outcome }, 'stripe event');
    return { received: true, outcome };
  });
}

async function apply(tx: Queryable, change: BillingChange, event: { id: string; type: string; at: Date }): Promise<string> {
  if ('ignored' in change) return `ignored: ${change.ignored}`;
  const named = change.tenantId && isUuid(change.tenantId) ? change.tenantId : undefined;
  const tenantId = (change.customer && (await tenantOfCustomer(tx, change.customer))) || named;
  if (!tenantId) return 'ignored: no tenant has this customer, and the event names none';
  const account = await lockBillingAccount(tx, tenantId);
  if (!account) return 'ignored: the tenant no longer exists';
  // Stripe does not deliver in order: a retry of an old event must not undo a newer one.
  if (account.last_event_at && account.last_event_at.getTime() > event.at.getTime()) return 'ignored: older than the last event applied to this tenant';
  if (change.ended && account.stripe_subscription_id && change.subscription !== account.stripe_subscription_id) {
    return "ignored: a subscription other than the tenant's current one ended";
  }
  await saveBillingAccount(tx, tenantId, {
    customer: change.customer ?? account.stripe_customer_id,
    subscription: change.ended ? null : (change.subscription ?? account.stripe_subscription_id),
    eventAt: event.at,
  });
  if (!change.tier) return `customer and subscription stored; the tier stays: ${change.why}`;
  const before = await setTenantTier(tx, tenantId, change.tier);
  if (before !== change.tier) {
    await appendAudit(tx, tenantId, null, {
      action: 'billing.webhook',
      target: 'tier',
      detail: { from: before, to: change.tier, event: event.id, type: event.type },
    });
  }
  return `tier ${change.tier}`;
}

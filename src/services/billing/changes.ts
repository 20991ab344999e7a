import { z } from 'zod';
import { badRequest } from '../../core/errors.ts';
import { tierOfPrice, type StripeSettings } from './stripe.ts';

/** The Stripe events billing acts on; any other is answered 200 and left alone. */
export const BILLING_EVENTS = ['checkout.session.completed', 'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted'];

/** What one event asks of a tenant's billing. */
export type BillingChange =
  | { ignored: string }
  | {
      /** orgmem's own reference to the tenant (client_reference_id, metadata); the customer's known tenant comes first. */
      tenantId: string | null;
      customer: string | null;
      subscription: string | null;
      /** The subscription ended (or stopped being paid): the tenant falls to free unless another one is its current. */
      ended: boolean;
      /** The tier to move to; unset, the tier stays and `why` says why. */
      tier?: string;
      why?: string;
    };

/** A Stripe id, or the expanded object that has it. */
const idOf = z
  .union([z.string(), z.object({ id: z.string() })])
  .nullish()
  .transform((v) => (typeof v === 'string' ? v : (v?.id ?? null)));
const metadata = z
  .record(z.string(), z.string())
  .nullish()
  .transform((m) => m ?? {});

// Only the fields read here; Stripe's objects carry many more.
const checkoutSession = z.object({
  mode: z.string(),
  client_reference_id: z.string().nullish(),
  customer: idOf,
  subscription: idOf,
  payment_status: z.string(),
  metadata,
});
const subscription = z.object({
  id: z.string(),
  status: z.string(),
  customer: idOf,
  metadata,
  items: z.object({ data: z.array(z.object({ price: z.object({ id: z.string() }) })) }),
});

/** Paid for, or in its trial or payment-retry period: the subscription's tier. */
const PAYING = new Set(['active', 'trialing', 'past_due']);
/** Ended or no longer paid: free. `incomplete` (the first payment pending) changes nothing yet. */
const ENDED = new Set(['canceled', 'unpaid', 'incomplete_expired', 'paused']);

/** The object of a signed event is Stripe's, so a shape not as documented is refused, for Stripe to retry and the operator to see. */
function read<T extends z.ZodType>(schema: T, object: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(object);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badRequest(`The event's object is not ${what} as expected (${issue.path.join('.')}: ${issue.message})`);
  }
  return parsed.data;
}

/** What a billing event (one of BILLING_EVENTS) asks; the tenant is found when it is applied. */
export function billingChange(type: string, object: unknown, settings: StripeSettings): BillingChange {
  if (type === 'checkout.session.completed') {
    const session = read(checkoutSession, object, 'a Checkout Session');
    if (session.mode !== 'subscription') return { ignored: `a ${session.mode} checkout, not a subscription` };
    const ids = {
      tenantId: session.client_reference_id ?? session.metadata.tenant_id ?? null,
      customer: session.customer,
      subscription: session.subscription,
      ended: false,
    };
    const tier = session.metadata.tier;
    // Delayed payment methods complete the checkout before the money arrives: the subscription's events move the tier then.
    if (session.payment_status === 'unpaid') return { ...ids, why: "the payment is still pending; the subscription's events move the tier" };
    if (!tier || !settings.prices[tier]) return { ...ids, why: "the session names no paid tier; the subscription's events move the tier" };
    return { ...ids, tier };
  }
  const sub = read(subscription, object, 'a Subscription');
  const ids = { tenantId: sub.metadata.tenant_id ?? null, customer: sub.customer, subscription: sub.id };
  if (type === 'customer.subscription.deleted' || ENDED.has(sub.status)) return { ...ids, ended: true, tier: 'free' };
  if (!PAYING.has(sub.status)) return { ...ids, ended: false, why: `the subscription is ${sub.status}` };
  const tier = sub.items.data.map((item) => tierOfPrice(settings, item.price.id)).find((t) => t !== undefined);
  return tier ? { ...ids, ended: false, tier } : { ...ids, ended: false, why: 'no price of the subscription is in ORGMEM_STRIPE_PRICES' };
}

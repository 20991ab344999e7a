import type { AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest, conflict } from '../../core/errors.ts';
import { billingAccount } from './accounts.ts';
import { callStripe, stripeClient, stripeSettings } from './stripe.ts';

/** Where Stripe sends the person back when the caller names no page: the dashboard at this server's `/`. */
const home = (ctx: AuthedCtx) => `${ctx.origin ?? `http://localhost:${ctx.app.config.port}`}/`;

function urlOf(session: { url: string | null }, what: string): { url: string } {
  if (!session.url) throw new AppError('BAD_GATEWAY', `Stripe answered ${what} without a url`);
  return { url: session.url };
}

/**
 * A Checkout Session in subscription mode for the tier's price. The tenant id goes into
 * client_reference_id and into the metadata of the session and of the subscription it makes, so
 * the webhook finds the tenant from either event; a known customer is reused, otherwise Stripe
 * makes one from the tenant's email.
 */
export async function createCheckout(ctx: AuthedCtx, input: { tier: string; success_url?: string; cancel_url?: string }): Promise<{ url: string }> {
  const settings = stripeSettings(ctx.app);
  const price = settings.prices[input.tier];
  if (!price) {
    const message = `must be a paid tier with a price: ${Object.keys(settings.prices).join(', ')}`;
    throw new AppError('UNPROCESSABLE_CONTENT', `Invalid request: tier: ${message}`, [{ path: 'tier', message }]);
  }
  const account = await billingAccount(ctx.app.platform, ctx.tenant.id);
  // A second subscription would bill twice: changing plan is the portal's job.
  if (account?.stripe_subscription_id) {
    throw conflict(
      `This tenant already has a subscription (${account.stripe_subscription_id}): change or cancel it in the billing portal (POST /v1/memory/stripe/portal)`,
    );
  }
  const metadata = { tenant_id: ctx.tenant.id, tier: input.tier };
  const session = await callStripe('the checkout session', () =>
    stripeClient(ctx.app).checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price, quantity: 1 }],
      client_reference_id: ctx.tenant.id,
      metadata,
      subscription_data: { metadata },
      ...(account?.stripe_customer_id ? { customer: account.stripe_customer_id } : { customer_email: ctx.tenant.email }),
      success_url: input.success_url ?? home(ctx),
      cancel_url: input.cancel_url ?? home(ctx),
    }),
  );
  return urlOf(session, 'the checkout session');
}

/** A billing portal session for the tenant's customer (made by its first checkout). */
export async function createPortal(ctx: AuthedCtx, input: { return_url?: string }): Promise<{ url: string }> {
  stripeSettings(ctx.app);
  const customer = (await billingAccount(ctx.app.platform, ctx.tenant.id))?.stripe_customer_id;
  if (!customer) throw badRequest('This tenant has no Stripe customer yet: subscribe first (POST /v1/memory/stripe/checkout/create)');
  const session = await callStripe('the billing portal session', () =>
    stripeClient(ctx.app).billingPortal.sessions.create({ customer, return_url: input.return_url ?? home(ctx) }),
  );
  return urlOf(session, 'the billing portal session');
}

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { returnUrl, stripePage } from '../src/schemas/billing.ts';
import { createCheckout } from '../src/services/billing/sessions.ts';

export default defineProcedure({
  name: 'billing.checkout',
  summary: 'Subscribe to a paid tier: answers the URL of a Stripe Checkout page',
  description:
    "A Checkout Session in subscription mode for the tier's price (ORGMEM_STRIPE_PRICES). The tier moves when Stripe " +
    "reports the payment to the webhook, not when this answers. The tenant's Stripe customer is reused once it has one; " +
    "before that, Stripe makes one from the account email. `success_url` and `cancel_url` default to this server's `/`.",
  rest: { method: 'POST', path: '/v1/memory/stripe/checkout/create', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: {
    CONFLICT: 'The tenant already has a subscription: change or cancel it in the billing portal',
    BAD_GATEWAY: 'Stripe refused the session or could not be reached',
    SERVICE_UNAVAILABLE: 'Billing is not configured on this server (ORGMEM_STRIPE_*)',
  },
  input: z.object({
    tier: z.string().min(1).max(100).describe('A paid tier with a price on this server, e.g. pro or enterprise'),
    success_url: returnUrl.optional().describe('Where Stripe sends the person after paying'),
    cancel_url: returnUrl.optional().describe('Where Stripe sends the person who gives up'),
  }),
  output: stripePage,
  handler: (ctx, input) => createCheckout(ctx, input),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { receiveStripeEvent } from '../src/services/billing/webhook.ts';

export default defineProcedure({
  name: 'billing.webhook',
  summary: "Stripe's webhook: moves tenants' tiers on checkout and subscription events (signed by Stripe, no API key)",
  description:
    'For Stripe, not for clients. The `Stripe-Signature` header must verify over the body exactly as sent, with ' +
    'ORGMEM_STRIPE_WEBHOOK_SECRET, and be at most 300 s old. checkout.session.completed stores the customer and ' +
    'subscription and moves the tenant to the tier it paid for; customer.subscription.created and .updated move it to ' +
    "the tier of the subscription's price (free once canceled, unpaid, expired or paused); .deleted moves it to free. " +
    'Other event types are answered 200 and ignored. An event already acted on is answered 200 with `duplicate: true` and ' +
    'does nothing again; an event older than the last one applied to the tenant changes nothing.',
  rest: { method: 'POST', path: '/v1/memory/stripe/webhook', status: 200 },
  access: 'public',
  errors: {
    BAD_REQUEST: 'Stripe-Signature is missing, does not verify, or is older than 300 s; or the signed body is not a Stripe event as Stripe documents it',
    SERVICE_UNAVAILABLE: 'Billing is not configured on this server (ORGMEM_STRIPE_*)',
  },
  input: z.object({
    payload: z.string().describe('A Stripe event, as Stripe sends it'),
    signature: z.string().optional().describe('Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">'),
  }),
  output: z.object({
    received: z.literal(true),
    duplicate: z.literal(true).optional().describe('The event was acted on before: nothing was done again'),
    outcome: z.string().describe("What the event did (or why it did nothing), as shown in Stripe's delivery log"),
  }),
  handler: (ctx, input) => receiveStripeEvent(ctx, input.payload, input.signature),
});

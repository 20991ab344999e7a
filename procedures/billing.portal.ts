import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { returnUrl, stripePage } from '../src/schemas/billing.ts';
import { createPortal } from '../src/services/billing/sessions.ts';

export default defineProcedure({
  name: 'billing.portal',
  summary: "Manage the subscription: answers the URL of Stripe's billing portal for this tenant",
  description: "Plan changes, cancellation, payment methods and invoices, on Stripe. `return_url` defaults to this server's `/`.",
  rest: { method: 'POST', path: '/v1/memory/stripe/portal', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: {
    BAD_REQUEST: 'the tenant has no Stripe customer yet (no checkout completed)',
    BAD_GATEWAY: 'Stripe refused the session or could not be reached',
    SERVICE_UNAVAILABLE: 'Billing is not configured on this server (ORGMEM_STRIPE_*)',
  },
  input: z.object({ return_url: returnUrl.optional().describe("Where the portal's back link goes") }),
  output: stripePage,
  handler: (ctx, input) => createPortal(ctx, input),
});

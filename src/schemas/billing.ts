import { z } from 'zod';

/** Billing with Stripe (docs/operations.md, "Billing"). */

/** A page Stripe sends the person back to. */
export const returnUrl = z.url({ protocol: /^https?$/ }).max(2048);

/** A Stripe-hosted page (checkout or billing portal) to send the person to. */
export const stripePage = z.object({ url: z.string().describe('The Stripe-hosted page to send the person to; it expires after a while (24 h for checkout)') });

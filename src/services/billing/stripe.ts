import Stripe from 'stripe';
import type { App } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** Price id by paid tier. */
  prices: Record<string, string>;
}

// One client per running app: it keeps its connections and the telemetry of its last request.
const clients = new WeakMap<App, Stripe>();

/**
 * The Stripe settings, all of them or a 503 naming what is missing: billing that is half
 * configured (a checkout whose payment no webhook would ever see) is as closed as none.
 */
export function stripeSettings(app: App): StripeSettings {
  const { secretKey, webhookSecret, prices } = app.config.stripe;
  if (secretKey && webhookSecret && Object.keys(prices).length) return { secretKey, webhookSecret, prices };
  const missing = [
    !secretKey && 'ORGMEM_STRIPE_SECRET_KEY',
    !webhookSecret && 'ORGMEM_STRIPE_WEBHOOK_SECRET',
    !Object.keys(prices).length && 'ORGMEM_STRIPE_PRICES',
  ].filter(Boolean);
  throw new AppError('SERVICE_UNAVAILABLE', `Billing is not configured on this server: the operator has not set ${missing.join(', ')}`);
}

/** The client, pointed at ORGMEM_STRIPE_API_URL (a fake on 127.0.0.1 in tests, a proxy...). */
export function stripeClient(app: App): Stripe {
  const settings = stripeSettings(app);
  let client = clients.get(app);
  if (!client) {
    const api = new URL(app.config.stripe.apiUrl);
    const protocol = api.protocol === 'http:' ? 'http' : 'https';
    client = new Stripe(settings.secretKey, {
      host: api.hostname,
      port: api.port || (protocol === 'http' ? 80 : 443),
      protocol,
      // A person waits on checkout and portal: Stripe's 80 s default is too long to hold them.
      timeout: 20_000,
      maxNetworkRetries: 1,
      appInfo: { name: 'orgmem' },
    });
    clients.set(app, client);
  }
  return client;
}

/** The paid tier a price stands for (ORGMEM_STRIPE_PRICES read backwards). */
export const tierOfPrice = (settings: StripeSettings, price: string): string | undefined => Object.entries(settings.prices).find(([, p]) => p === price)?.[0];

/** A call to Stripe; its refusal or a network failure is a 502 with Stripe's own message. */
export async function callStripe<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof Stripe.errors.StripeError) throw new AppError('BAD_GATEWAY', `Stripe did not create ${what}: ${err.message}`);
    throw err;
  }
}

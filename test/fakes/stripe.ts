import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StripeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  stripeVersion: string | undefined;
  /** The form body decoded the way Stripe reads it: `a[b][0][c]=v` nests, numbered keys are arrays. */
  params: Record<string, any>;
}

type Nested = string | Nested[] | { [key: string]: Nested };

/** Objects whose keys are 0, 1, 2... become arrays, as Stripe reads `line_items[0][price]`. */
function withArrays(value: Nested): Nested {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length && keys.every((k, i) => k === String(i))) return keys.map((k) => withArrays(value[k]!));
  return Object.fromEntries(keys.map((k) => [k, withArrays(value[k]!)]));
}

function parseForm(raw: string): Record<string, any> {
  const root: Record<string, Nested> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const path = key.replace(/\]/g, '').split('[');
    let node = root;
    path.forEach((k, i) => {
      if (i === path.length - 1) node[k] = value;
      else node = (node[k] ??= {}) as Record<string, Nested>;
    });
  }
  return withArrays(root) as Record<string, any>;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

/**
 * Stripe's API on 127.0.0.1, as much of it as billing uses, speaking Stripe's protocol:
 * form-encoded POSTs, `Authorization: Bearer <secret key>`, JSON objects with `object` and `id`,
 * and errors as `{error: {type, message}}` with Stripe's statuses. Checkout Sessions
 * (`/v1/checkout/sessions`, which checks the price against `prices`) and billing portal
 * sessions (`/v1/billing_portal/sessions`, for customers `cus_...`). Every request is recorded.
 */
export async function startStripeFake(opts: { secretKey: string; prices: string[] }) {
  const requests: StripeRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const params = parseForm(Buffer.concat(chunks).toString('utf8'));
      requests.push({
        method: req.method ?? '',
        path,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        stripeVersion: req.headers['stripe-version'] as string | undefined,
        params,
      });
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') }).end(JSON.stringify(body));
      const refuse = (status: number, type: string, message: string, extra: Record<string, string> = {}) =>
        send(status, { error: { type, message, ...extra } });
      if (req.headers.authorization !== `Bearer ${opts.secretKey}`) {
        return refuse(401, 'invalid_request_error', `Invalid API Key provided: ${(req.headers.authorization ?? '').slice(7, 15)}****`);
      }
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        const price = params.line_items?.[0]?.price;
        if (params.mode !== 'subscription') return refuse(400, 'invalid_request_error', 'This fake only makes subscription sessions.', { param: 'mode' });
        if (!opts.prices.includes(price)) {
          return refuse(400, 'invalid_request_error', `No such price: '${price}'`, { code: 'resource_missing', param: 'line_items[0][price]' });
        }
        const session = id('cs');
        return send(200, {
          id: session,
          object: 'checkout.session',
          mode: 'subscription',
          status: 'open',
          payment_status: 'unpaid',
          client_reference_id: params.client_reference_id ?? null,
          customer: params.customer ?? null,
          customer_email: params.customer_email ?? null,
          metadata: params.metadata ?? {},
          success_url: params.success_url,
          cancel_url: params.cancel_url,
          subscription: null,
          livemode: false,
          url: `https://checkout.stripe.test/c/pay/${session}`,
        });
      }
      if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
        if (!String(params.customer ?? '').startsWith('cus_')) {
          return refuse(400, 'invalid_request_error', `No such customer: '${params.customer}'`, { code: 'resource_missing', param: 'customer' });
        }
        const session = id('bps');
        return send(200, {
          id: session,
          object: 'billing_portal.session',
          customer: params.customer,
          return_url: params.return_url ?? null,
          livemode: false,
          url: `https://billing.stripe.test/p/session/${session}`,
        });
      }
      refuse(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${path}).`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

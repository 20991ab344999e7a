import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIERS, loadConfig } from '../src/core/config.ts';
import { startStripeFake } from './fakes/stripe.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

const SECRET_KEY = 'sk_test_orgmem_billing';
const WEBHOOK_SECRET = 'whsec_test_orgmem_billing';
const PRICES = { pro: 'price_pro_monthly', enterprise: 'price_enterprise_monthly', team: 'price_retired' };
const TEAM_LIMITS = { rate_limit_per_minute: 300, max_memories: 50_000, max_collections: 500, max_storage_bytes: 10_737_418_240 };

const CHECKOUT = '/v1/memory/stripe/checkout/create';
const PORTAL = '/v1/memory/stripe/portal';
const WEBHOOK = '/v1/memory/stripe/webhook';

const now = () => Math.floor(Date.now() / 1000);
const stripeId = (prefix: string) => `${prefix}_test_${randomBytes(8).toString('hex')}`;

/** A Stripe event as Stripe sends it (only `data.object` differs by type). */
function stripeEvent(type: string, object: Record<string, unknown>, opts: { id?: string; created?: number } = {}) {
  return {
    id: opts.id ?? stripeId('evt'),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: opts.created ?? now(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

const completedCheckout = (tenantId: string, tier: string, customer: string, subscription: string) => ({
  id: stripeId('cs'),
  object: 'checkout.session',
  mode: 'subscription',
  status: 'complete',
  payment_status: 'paid',
  client_reference_id: tenantId,
  customer,
  subscription,
  metadata: { tenant_id: tenantId, tier },
});

const subscriptionObject = (id: string, customer: string, price: string, status = 'active', metadata: Record<string, string> = {}) => ({
  id,
  object: 'subscription',
  customer,
  status,
  metadata,
  items: { object: 'list', data: [{ id: stripeId('si'), object: 'subscription_item', price: { id: price, object: 'price' }, quantity: 1 }] },
});

describe('billing (Stripe)', () => {
  let server: TestServer;
  let fake: Awaited<ReturnType<typeof startStripeFake>>;

  beforeAll(async () => {
    fake = await startStripeFake({ secretKey: SECRET_KEY, prices: [PRICES.pro, PRICES.enterprise] });
    server = await startServer(
      {
        ORGMEM_EMBEDDER: 'hash',
        ORGMEM_STRIPE_SECRET_KEY: SECRET_KEY,
        ORGMEM_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        ORGMEM_STRIPE_API_URL: fake.url,
        ORGMEM_STRIPE_PRICES: JSON.stringify(PRICES),
        // A tier whose price Stripe no longer knows, to see Stripe's refusal.
        ORGMEM_TIERS: JSON.stringify({ team: TEAM_LIMITS }),
      },
      { worker: false },
    );
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  /** Posts an event to the webhook, signed as Stripe signs it (or as the options break it). */
  function deliver(event: object | string, opts: { secret?: string; timestamp?: number; signature?: string | null; tamper?: (raw: string) => string } = {}) {
    const raw = typeof event === 'string' ? event : JSON.stringify(event, null, 2);
    const signature =
      opts.signature === undefined
        ? Stripe.webhooks.generateTestHeaderString({ payload: raw, secret: opts.secret ?? WEBHOOK_SECRET, timestamp: opts.timestamp })
        : opts.signature;
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
    if (signature !== null) headers['stripe-signature'] = signature;
    return call(server.url, 'POST', WEBHOOK, { rawBody: opts.tamper ? opts.tamper(raw) : raw, headers });
  }

  const me = async (t: Tenant) => (await t.api('GET', '/v1/memory/admin/me')).body as { tier: string; limits: unknown; email: string };
  const account = async (t: Tenant) =>
    (
      await server.app.db.query<{ stripe_customer_id: string | null; stripe_subscription_id: string | null }>(
        'select stripe_customer_id, stripe_subscription_id from billing_accounts where tenant_id = $1',
        [t.id],
      )
    )[0];
  const tierAudit = async (t: Tenant) =>
    server.app.db.query<{ detail: { from: string; to: string } }>(
      `select detail from audit_log where tenant_id = $1 and action = 'billing.webhook' order by at`,
      [t.id],
    );

  /** A free tenant that has paid for `tier` through a completed checkout. */
  async function subscribed(tier = 'pro') {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const ids = { customer: stripeId('cus'), subscription: stripeId('sub') };
    const res = await deliver(stripeEvent('checkout.session.completed', completedCheckout(t.id, tier, ids.customer, ids.subscription)));
    expect(res.body).toEqual({ received: true, outcome: `tier ${tier}` });
    return { t, ...ids };
  }

  it('answers 503 on every billing route when Stripe is not configured', async () => {
    const bare = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_STRIPE_SECRET_KEY: SECRET_KEY }, { worker: false });
    try {
      const t = await newTenant(bare.url, bare.adminKey, { tier: 'free' });
      const answers = [
        await t.api('POST', CHECKOUT, { tier: 'pro' }),
        await t.api('POST', PORTAL, {}),
        await call(bare.url, 'POST', WEBHOOK, { body: stripeEvent('customer.subscription.deleted', {}), headers: { 'stripe-signature': 't=1,v1=00' } }),
      ];
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.body.detail).toBe('Billing is not configured on this server: the operator has not set ORGMEM_STRIPE_WEBHOOK_SECRET, ORGMEM_STRIPE_PRICES');
      }
    } finally {
      await bare.close();
    }
  });

  it('refuses at start a price for a tier without limits, one price for two tiers, or an API URL with a path', () => {
    expect(() => loadConfig({ ORGMEM_STRIPE_PRICES: '{"gold":"price_1"}' })).toThrow(
      /ORGMEM_STRIPE_PRICES: "gold" is not a paid tier \(tiers: pro, enterprise\)/,
    );
    expect(() => loadConfig({ ORGMEM_STRIPE_PRICES: '{"free":"price_1"}' })).toThrow(/"free" is not a paid tier/);
    expect(() => loadConfig({ ORGMEM_STRIPE_PRICES: '{"pro":"price_1","enterprise":"price_1"}' })).toThrow(/price_1 is the price of more than one tier/);
    expect(() => loadConfig({ ORGMEM_STRIPE_PRICES: 'pro=price_1' })).toThrow(/ORGMEM_STRIPE_PRICES: not JSON/);
    expect(() => loadConfig({ ORGMEM_STRIPE_API_URL: 'http://127.0.0.1:1/v1' })).toThrow(/ORGMEM_STRIPE_API_URL: must be an origin without a path/);
    expect(() => loadConfig({ ORGMEM_STRIPE_API_URL: 'not a url' })).toThrow(/Invalid configuration:\n {2}ORGMEM_STRIPE_API_URL: /);
    expect(() => loadConfig({ ORGMEM_STRIPE_API_URL: 'ftp://stripe.test' })).toThrow(/Invalid configuration:\n {2}ORGMEM_STRIPE_API_URL: /);
  });

  it("checkout: a subscription session for the tier's price, the tenant in the reference and metadata, Stripe's url answered", async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const { email } = await me(t);
    const before = fake.requests.length;
    const res = await t.api('POST', CHECKOUT, { tier: 'pro' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url: expect.stringMatching(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/) });

    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      method: 'POST',
      path: '/v1/checkout/sessions',
      authorization: `Bearer ${SECRET_KEY}`,
      contentType: 'application/x-www-form-urlencoded',
      stripeVersion: Stripe.API_VERSION,
    });
    expect(sent[0]!.params).toEqual({
      mode: 'subscription',
      line_items: [{ price: PRICES.pro, quantity: '1' }],
      client_reference_id: t.id,
      metadata: { tenant_id: t.id, tier: 'pro' },
      subscription_data: { metadata: { tenant_id: t.id, tier: 'pro' } },
      customer_email: email,
      success_url: `${server.url}/`,
      cancel_url: `${server.url}/`,
    });
    // The page does not move the tier: only Stripe's word on the webhook does.
    expect((await me(t)).tier).toBe('free');

    const own = await t.api('POST', CHECKOUT, { tier: 'enterprise', success_url: 'https://app.example.com/paid', cancel_url: 'https://app.example.com/plans' });
    expect(own.status).toBe(200);
    expect(fake.requests.at(-1)!.params).toMatchObject({
      line_items: [{ price: PRICES.enterprise }],
      success_url: 'https://app.example.com/paid',
      cancel_url: 'https://app.example.com/plans',
    });
  });

  it("checkout refuses a tier without a price (422), a second subscription (409), and passes on Stripe's refusal (502)", async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    for (const tier of ['free', 'gold']) {
      const res = await t.api('POST', CHECKOUT, { tier });
      expect(res.status, tier).toBe(422);
      expect(res.body.errors).toEqual([{ path: 'tier', message: 'must be a paid tier with a price: pro, enterprise, team' }]);
    }
    expect((await t.api('POST', CHECKOUT, { tier: 'pro', success_url: 'javascript:alert(1)' })).status).toBe(422);

    const refused = await t.api('POST', CHECKOUT, { tier: 'team' });
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toBe(`Stripe did not create the checkout session: No such price: '${PRICES.team}'`);

    const { t: paying, subscription } = await subscribed();
    const again = await paying.api('POST', CHECKOUT, { tier: 'enterprise' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(subscription);
  });

  it('portal: 400 before the tenant has a customer; then a session for its customer', async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const before = fake.requests.length;
    const none = await t.api('POST', PORTAL, {});
    expect(none.status).toBe(400);
    expect(none.body.detail).toMatch(/no Stripe customer yet/);
    expect(fake.requests.length).toBe(before);

    const { t: paying, customer } = await subscribed();
    const res = await paying.api('POST', PORTAL, {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url: expect.stringMatching(/^https:\/\/billing\.stripe\.test\/p\/session\/bps_test_/) });
    expect(fake.requests.at(-1)).toMatchObject({
      path: '/v1/billing_portal/sessions',
      authorization: `Bearer ${SECRET_KEY}`,
      params: { customer, return_url: `${server.url}/` },
    });
    await paying.api('POST', PORTAL, { return_url: 'https://app.example.com/billing' });
    expect(fake.requests.at(-1)!.params).toEqual({ customer, return_url: 'https://app.example.com/billing' });
  });

  it('a completed checkout moves the tier and its limits, stores the customer, and is reused by the next checkout', async () => {
    const { t, customer, subscription } = await subscribed('pro');
    expect(await me(t)).toMatchObject({ tier: 'pro', limits: DEFAULT_TIERS.pro });
    expect(await account(t)).toEqual({ stripe_customer_id: customer, stripe_subscription_id: subscription });
    expect((await tierAudit(t)).map((r) => r.detail)).toMatchObject([{ from: 'free', to: 'pro' }]);

    // Once the subscription is over, a new checkout reuses the customer instead of the email.
    const ended = await deliver(stripeEvent('customer.subscription.deleted', subscriptionObject(subscription, customer, PRICES.pro, 'canceled')));
    expect(ended.body.outcome).toBe('tier free');
    expect((await t.api('POST', CHECKOUT, { tier: 'enterprise' })).status).toBe(200);
    const params = fake.requests.at(-1)!.params;
    expect(params.customer).toBe(customer);
    expect(params).not.toHaveProperty('customer_email');
  });

  it('subscription events move the tier by price; canceled, unpaid and deleted fall to free', async () => {
    const { t, customer, subscription } = await subscribed('pro');
    let created = now();
    const update = (price: string, status = 'active') =>
      deliver(stripeEvent('customer.subscription.updated', subscriptionObject(subscription, customer, price, status), { created: ++created }));

    expect((await update(PRICES.enterprise)).body.outcome).toBe('tier enterprise');
    expect(await me(t)).toMatchObject({ tier: 'enterprise', limits: DEFAULT_TIERS.enterprise });
    // Past due is Stripe's retry period: the tier holds.
    expect((await update(PRICES.enterprise, 'past_due')).body.outcome).toBe('tier enterprise');
    expect((await update(PRICES.pro, 'unpaid')).body.outcome).toBe('tier free');
    expect(await me(t)).toMatchObject({ tier: 'free', limits: DEFAULT_TIERS.free });
    expect((await update(PRICES.pro)).body.outcome).toBe('tier pro');
    expect((await update(PRICES.pro, 'canceled')).body.outcome).toBe('tier free');
    expect((await me(t)).tier).toBe('free');

    // A new subscription, found by the customer, moves it again; its deletion ends it.
    const next = stripeId('sub');
    const made = await deliver(stripeEvent('customer.subscription.created', subscriptionObject(next, customer, PRICES.pro), { created: ++created }));
    expect(made.body.outcome).toBe('tier pro');
    expect((await account(t))!.stripe_subscription_id).toBe(next);
    const deleted = await deliver(
      stripeEvent('customer.subscription.deleted', subscriptionObject(next, customer, PRICES.pro, 'canceled'), { created: ++created }),
    );
    expect(deleted.status).toBe(200);
    expect(await me(t)).toMatchObject({ tier: 'free', limits: DEFAULT_TIERS.free });
    expect(await account(t)).toEqual({ stripe_customer_id: customer, stripe_subscription_id: null });
    expect((await tierAudit(t)).map((r) => `${r.detail.from}->${r.detail.to}`)).toEqual([
      'free->pro',
      'pro->enterprise',
      'enterprise->free',
      'free->pro',
      'pro->free',
      'free->pro',
      'pro->free',
    ]);
  });

  it('a subscription made before its checkout is reported finds the tenant by its metadata', async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const customer = stripeId('cus');
    const res = await deliver(
      stripeEvent('customer.subscription.created', subscriptionObject(stripeId('sub'), customer, PRICES.enterprise, 'active', { tenant_id: t.id })),
    );
    expect(res.body.outcome).toBe('tier enterprise');
    expect((await me(t)).tier).toBe('enterprise');
    expect((await account(t))!.stripe_customer_id).toBe(customer);
  });

  it('a checkout whose payment is still pending stores the ids; the subscription moves the tier once it is paid', async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const [customer, subscription] = [stripeId('cus'), stripeId('sub')];
    const pending = await deliver(
      stripeEvent('checkout.session.completed', { ...completedCheckout(t.id, 'pro', customer, subscription), payment_status: 'unpaid' }),
    );
    expect(pending.body.outcome).toBe(
      "customer and subscription stored; the tier stays: the payment is still pending; the subscription's events move the tier",
    );
    expect(await account(t)).toEqual({ stripe_customer_id: customer, stripe_subscription_id: subscription });
    const incomplete = await deliver(stripeEvent('customer.subscription.updated', subscriptionObject(subscription, customer, PRICES.pro, 'incomplete')));
    expect(incomplete.body.outcome).toMatch(/the tier stays: the subscription is incomplete$/);
    expect((await me(t)).tier).toBe('free');
    const paid = await deliver(stripeEvent('customer.subscription.updated', subscriptionObject(subscription, customer, PRICES.pro), { created: now() + 1 }));
    expect(paid.body.outcome).toBe('tier pro');
    expect(await me(t)).toMatchObject({ tier: 'pro', limits: DEFAULT_TIERS.pro });
  });

  it('changes nothing for an event older than the last one applied, or for the end of a subscription that is not current', async () => {
    const { t, customer, subscription } = await subscribed('pro');
    const late = await deliver(
      stripeEvent('customer.subscription.updated', subscriptionObject(subscription, customer, PRICES.pro, 'canceled'), { created: now() - 3600 }),
    );
    expect(late.body.outcome).toBe('ignored: older than the last event applied to this tenant');
    const other = await deliver(stripeEvent('customer.subscription.deleted', subscriptionObject(stripeId('sub'), customer, PRICES.pro, 'canceled')));
    expect(other.body.outcome).toBe("ignored: a subscription other than the tenant's current one ended");
    expect((await me(t)).tier).toBe('pro');
  });

  it('refuses a bad, missing, expired or tampered signature with 400 and changes nothing', async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const event = stripeEvent('checkout.session.completed', completedCheckout(t.id, 'enterprise', stripeId('cus'), stripeId('sub')));
    const refusals = {
      'wrong secret': await deliver(event, { secret: 'whsec_not_the_one' }),
      'no header': await deliver(event, { signature: null }),
      'not a signature': await deliver(event, { signature: 'nonsense' }),
      // Signed correctly, ten minutes ago: outside the 300 s window.
      expired: await deliver(event, { timestamp: now() - 600 }),
      'body changed after signing': await deliver(event, { tamper: (raw) => raw.replace('"enterprise"', '"pro"') }),
      // Parsed and serialized again (what a JSON-parsing receiver would check): not the bytes Stripe signed.
      'body re-serialized': await deliver(event, { tamper: (raw) => JSON.stringify(JSON.parse(raw)) }),
    };
    for (const [why, res] of Object.entries(refusals)) {
      expect(res.status, why).toBe(400);
      expect(res.body.detail, why).toMatch(/Stripe-Signature/);
    }
    expect(refusals.expired.body.detail).toMatch(/tolerance/i);
    expect(await me(t)).toMatchObject({ tier: 'free', limits: DEFAULT_TIERS.free });
    expect(await account(t)).toBeUndefined();
    const [seen] = await server.app.db.query<{ n: number }>('select count(*)::int as n from stripe_events where id = $1', [event.id]);
    expect(seen!.n).toBe(0);

    // The same event, signed as Stripe signs it, is taken.
    expect((await deliver(event)).body.outcome).toBe('tier enterprise');
  });

  it('acts on an event id once: a replay is answered 200 duplicate and does nothing', async () => {
    const t = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const event = stripeEvent('checkout.session.completed', completedCheckout(t.id, 'pro', stripeId('cus'), stripeId('sub')));
    expect((await deliver(event)).body).toEqual({ received: true, outcome: 'tier pro' });
    // The operator moves the tenant by hand; acting on the event again would undo that.
    await server.app.db.query(`update tenants set tier = 'enterprise' where id = $1`, [t.id]);
    for (const replay of [await deliver(event), await deliver(event)]) {
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual({ received: true, duplicate: true, outcome: 'already processed' });
    }
    expect((await me(t)).tier).toBe('enterprise');
    expect(await tierAudit(t)).toHaveLength(1);

    // Two deliveries of one event at once (Stripe retrying while the first is still being answered): one acts.
    const u = await newTenant(server.url, server.adminKey, { tier: 'free' });
    const once = stripeEvent('checkout.session.completed', completedCheckout(u.id, 'pro', stripeId('cus'), stripeId('sub')));
    const both = await Promise.all([deliver(once), deliver(once), deliver(once)]);
    expect(both.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(both.map((r) => r.body.outcome).sort()).toEqual(['already processed', 'already processed', 'tier pro']);
    expect(await tierAudit(u)).toHaveLength(1);
  });

  it('answers 200 to event types it does not act on, and 400 to an object not shaped as Stripe documents', async () => {
    const ignored = await deliver(stripeEvent('invoice.paid', { id: stripeId('in'), object: 'invoice' }));
    expect(ignored.status).toBe(200);
    expect(ignored.body).toEqual({ received: true, outcome: 'ignored: orgmem does not act on invoice.paid' });
    const payment = await deliver(
      stripeEvent('checkout.session.completed', { ...completedCheckout(stripeId('x'), 'pro', stripeId('cus'), ''), mode: 'payment' }),
    );
    expect(payment.body.outcome).toBe('ignored: a payment checkout, not a subscription');
    const broken = await deliver(stripeEvent('customer.subscription.updated', { id: stripeId('sub'), status: 'active' }));
    expect(broken.status).toBe(400);
    expect(broken.body.detail).toMatch(/^The event's object is not a Subscription as expected \(items: /);
    // Signed with the secret, but not an event: refused, and not as a bad signature.
    const notJson = await deliver('{"id": "evt_1", ');
    expect(notJson.status).toBe(400);
    expect(notJson.body.detail).toMatch(/^The body is not a Stripe event: /);
    const noType = await deliver({ id: stripeId('evt'), object: 'event', created: now(), data: { object: {} } });
    expect(noType.status).toBe(400);
    expect(noType.body.detail).toMatch(/^The body is not a Stripe event \(type: /);
  });

  it('checkout and portal refuse read-only keys', async () => {
    const { t } = await subscribed();
    // An admin key: billing needs one, and this one is refused for being read-only.
    const reader = await t.newKey('reader', true, 'admin');
    for (const [path, body] of [
      [CHECKOUT, { tier: 'pro' }],
      [PORTAL, {}],
    ] as const) {
      const res = await t.api('POST', path, body, reader.key);
      expect(res.status, path).toBe(403);
      expect(res.body.detail).toMatch(/read-only/);
    }
  });
});

-- Billing with Stripe (src/services/billing). A tenant's Stripe customer and current
-- subscription, and the Stripe events already acted on; the tier itself stays on tenants.
create table billing_accounts (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  -- one tenant per customer: subscription events find their tenant by it
  stripe_customer_id text unique,
  -- the subscription the tier follows; the end of another (older) one changes nothing
  stripe_subscription_id text,
  -- when Stripe created the last event applied: Stripe does not deliver in order, and an
  -- older event arriving late (a retry) must not undo a newer one
  last_event_at timestamptz,
  updated_at timestamptz not null default now()
);

-- Event ids acted on, so that a replay (Stripe's own retry, or a captured request sent again
-- inside the signature's tolerance window) is answered without acting twice.
create table stripe_events (
  id text primary key,
  type text not null,
  received_at timestamptz not null default now()
);

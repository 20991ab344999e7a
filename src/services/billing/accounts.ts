import type { Queryable } from '../../ports/db/db.ts';

export interface BillingAccount {
  tenant_id: string;
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  last_event_at: Date | null;
}

export async function billingAccount(q: Queryable, tenantId: string): Promise<BillingAccount | undefined> {
  const [row] = await q.query<BillingAccount>('select * from billing_accounts where tenant_id = $1', [tenantId]);
  return row;
}

export async function tenantOfCustomer(q: Queryable, customerId: string): Promise<string | undefined> {
  const [row] = await q.query<{ tenant_id: string }>('select tenant_id from billing_accounts where stripe_customer_id = $1', [customerId]);
  return row?.tenant_id;
}

/**
 * The tenant's billing row, made if it is the first event, and locked until the transaction
 * ends: two events for one tenant delivered at once are applied one after the other.
 * Undefined when the tenant does not exist (any more).
 */
export async function lockBillingAccount(tx: Queryable, tenantId: string): Promise<BillingAccount | undefined> {
  await tx.query('insert into billing_accounts (tenant_id) select id from tenants where id = $1 on conflict do nothing', [tenantId]);
  const [row] = await tx.query<BillingAccount>('select * from billing_accounts where tenant_id = $1 for update', [tenantId]);
  return row;
}

export async function saveBillingAccount(
  tx: Queryable,
  tenantId: string,
  next: { customer: string | null; subscription: string | null; eventAt: Date },
): Promise<void> {
  await tx.query(
    `update billing_accounts set stripe_customer_id = $2, stripe_subscription_id = $3, last_event_at = $4::timestamptz, updated_at = now()
      where tenant_id = $1`,
    [tenantId, next.customer, next.subscription, next.eventAt.toISOString()],
  );
}

/**
 * Records that an event was acted on; false when it was before (a replay). Run in the
 * transaction that acts on it: the id is kept only if the change commits, and a second delivery
 * of the same event arriving meanwhile waits on the first one's row, then finds it.
 */
export async function recordStripeEvent(tx: Queryable, id: string, type: string): Promise<boolean> {
  const rows = await tx.query('insert into stripe_events (id, type) values ($1, $2) on conflict do nothing returning id', [id, type]);
  return rows.length > 0;
}

/**
 * How long an event id is kept against replays. A captured delivery is refused by its signature
 * after 300 s anyway, and Stripe retries a delivery for up to 3 days (each retry signed anew), so
 * 30 days is well past any delivery that could still come; an older event would also change
 * nothing past the ordering check (last_event_at).
 */
const KEEP_EVENTS_DAYS = 30;

/** Drops the event ids older than KEEP_EVENTS_DAYS (the hourly access_sweep task); answers how many. */
export async function dropOldStripeEvents(q: Queryable): Promise<number> {
  const rows = await q.query(`delete from stripe_events where received_at < now() - make_interval(days => $1::int) returning id`, [KEEP_EVENTS_DAYS]);
  return rows.length;
}

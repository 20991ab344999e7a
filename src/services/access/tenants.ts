import type { TierLimits } from '../../core/config.ts';
import type { App } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { iso, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { KeyRole, Tenant } from '../../schemas/access.ts';
import { insertKey } from './keys.ts';

export interface TenantRow {
  id: string;
  name: string;
  email: string;
  tier: string;
  limits: Partial<TierLimits>;
  is_admin: boolean;
  created_at: Date;
}

/** Effective limits are the tier's, overridden per tenant where the operator set one. */
export function tenantView(row: TenantRow, tiers: Record<string, TierLimits>): Tenant {
  const base = tiers[row.tier] ?? tiers.free!;
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    tier: row.tier,
    limits: { ...base, ...row.limits },
    is_admin: row.is_admin,
    created_at: iso(row.created_at)!,
  };
}

interface NewTenant {
  name: string;
  email: string;
  tier?: string;
  is_admin?: boolean;
}

/** Inserts a tenant without keys; undefined when the email already has one (one tenant per email). */
export async function insertTenant(q: Queryable, input: NewTenant): Promise<TenantRow | undefined> {
  const [row] = await q.query<TenantRow>(
    `insert into tenants (id, name, email, tier, is_admin) values ($1, $2, $3, $4, $5)
     on conflict ((lower(email))) do nothing returning *`,
    [newId(), input.name, input.email, input.tier ?? 'free', input.is_admin ?? false],
  );
  return row;
}

export async function createTenant(app: App, input: NewTenant): Promise<{ tenant: Tenant; api_key: string }> {
  return app.platform.transaction(async (tx) => {
    const row = await insertTenant(tx, input);
    if (!row) throw conflict('A tenant with this email already exists');
    const { apiKey } = await insertKey(tx, row.id, 'default', 'admin', false);
    return { tenant: tenantView(row, app.config.tiers), api_key: apiKey };
  });
}

interface TenantRef {
  id: string;
  name: string;
  email: string;
}

/**
 * The one tenant `ref` names: its id, its email (any case) or its name. 404 for none; 409 when
 * several match (names are not unique), listing them so that the caller can name one by email or id.
 */
async function tenantNamed(q: Queryable, ref: string): Promise<TenantRef> {
  const tenants = await q.query<TenantRef>(
    'select id, name, email from tenants where id::text = $1 or lower(email) = lower($1) or name = $1 order by created_at',
    [ref],
  );
  if (!tenants.length) throw notFound(`No tenant has the name, email or id '${ref}'`);
  if (tenants.length > 1) {
    const list = tenants.map((t) => `  ${t.name} <${t.email}> ${t.id}`).join('\n');
    throw conflict(`Several tenants match '${ref}'; name one by email or id:\n${list}`);
  }
  return tenants[0]!;
}

/** A new API key for the tenant `ref` names (tenantNamed); its other keys stay as they are. The key is in the answer only. */
export async function createKeyFor(app: App, ref: string, label: string, role: KeyRole, readOnly: boolean) {
  const tenant = await tenantNamed(app.platform, ref);
  const { row, apiKey } = await insertKey(app.platform, tenant.id, label, role, readOnly);
  return { tenant, id: row.id, label: row.label, role: row.role, read_only: row.read_only, created_at: iso(row.created_at)!, api_key: apiKey };
}

export async function countTenants(app: App): Promise<number> {
  const [row] = await app.platform.query<{ n: number }>('select count(*)::int as n from tenants');
  return row!.n;
}

/**
 * Moves a tenant to another tier (billing): its limits follow, its per-tenant overrides stay.
 * Answers the tier it had, or undefined when there is no such tenant.
 */
export async function setTenantTier(q: Queryable, tenantId: string, tier: string): Promise<string | undefined> {
  // The joined row is read before the update: its tier is the one being replaced.
  const [row] = await q.query<{ before: string }>('update tenants t set tier = $2 from tenants b where t.id = $1 and b.id = t.id returning b.tier as before', [
    tenantId,
    tier,
  ]);
  return row?.before;
}

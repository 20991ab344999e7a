import type { TierLimits } from '../../config.ts';
import type { App } from '../../context.ts';
import { conflict } from '../../errors.ts';
import { iso, newId } from '../../ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Tenant } from '../../schemas/access.ts';
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
    const { apiKey } = await insertKey(tx, row.id, 'default', false);
    return { tenant: tenantView(row, app.config.tiers), api_key: apiKey };
  });
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
  const [row] = await q.query<{ before: string }>(
    'update tenants t set tier = $2 from tenants b where t.id = $1 and b.id = t.id returning b.tier as before',
    [tenantId, tier],
  );
  return row?.before;
}

import type { App } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { controlQueryable } from '../tenant-db/tenant-app.ts';
import { DEFAULT_POLICY, type TrustPolicy } from '../../schemas/trust.ts';

/**
 * The tenant's quarantine policy per trust class (docs/trust.md, "Quarantine"): its own, or the
 * default. Read on the platform, through `q` when the write's transaction is on the same database
 * (an embedded database has one connection).
 */
export async function trustPolicyOf(app: App, tenantId: string, q?: Queryable): Promise<TrustPolicy> {
  const [row] = await (q ? controlQueryable(app, q) : app.platform).query<{ policy: Partial<TrustPolicy> }>(
    'select policy from trust_policies where tenant_id = $1',
    [tenantId],
  );
  return { ...DEFAULT_POLICY, ...row?.policy };
}

/** Changes the classes given; the others keep their action (merged in the statement, so two changes at once both hold). */
export async function putTrustPolicy(app: App, tenantId: string, patch: Partial<TrustPolicy>): Promise<TrustPolicy> {
  const [row] = await app.platform.query<{ policy: Partial<TrustPolicy> }>(
    // The time is sent: Citus refuses a function call in a distributed upsert's update.
    `insert into trust_policies (tenant_id, policy, updated_at) values ($1, $2, $3)
     on conflict (tenant_id) do update set policy = trust_policies.policy || excluded.policy, updated_at = excluded.updated_at
     returning policy`,
    [tenantId, patch, new Date().toISOString()],
  );
  return { ...DEFAULT_POLICY, ...row!.policy };
}

import type { App } from '../../core/context.ts';
import { DATA_TABLES } from './schema.ts';

/**
 * Deletes a tenant's rows from its own database (account deletion): on the platform the tenant
 * row's cascade does it. Children first, so it holds whatever foreign keys that database keeps.
 */
export async function eraseOwnDatabaseData(app: App, tenantId: string): Promise<void> {
  if (app.db === app.platform) return;
  await app.db.transaction(async (tx) => {
    for (const table of [...DATA_TABLES].reverse()) await tx.query(`delete from ${table} where tenant_id = $1`, [tenantId]);
  });
}

import type { App } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { databaseApp } from './pools.ts';

/** The sealed connection string of a tenant's own database, if it has one. */
export async function sealedDatabaseOf(app: App, tenantId: string): Promise<string | undefined> {
  const [row] = await app.platform.query<{ sealed: string }>('select connection_string_sealed as sealed from database_configs where tenant_id = $1', [
    tenantId,
  ]);
  return row?.sealed;
}

/**
 * The App a tenant's work runs with: the platform's own, or for a tenant with its own database
 * the view whose `db` is that database. Resolved once per request (authentication reads the
 * sealed string in its own query) or per job; services below never ask where the data is.
 * `sealed` given (null: none) skips the lookup.
 */
export async function tenantApp(app: App, tenantId: string, sealed?: string | null): Promise<App> {
  const s = sealed === undefined ? await sealedDatabaseOf(app, tenantId) : sealed;
  return s ? databaseApp(app, s) : app;
}

/**
 * Where control data (webhooks, usage) is read or written by a call holding `q` on the data
 * database: `q` itself when the data lives on the platform (same transaction, as before), else
 * the platform.
 */
export const controlQueryable = (app: App, q: Queryable): Queryable => (app.db === app.platform ? q : app.platform);

/** The other way round: where data is written by a call holding `q` on the platform (a key rotation moving its grants). */
export const dataQueryable = (app: App, q: Queryable): Queryable => (app.db === app.platform ? q : app.db);

/** Runs `fn` (a sweep over data: expiry, due connector syncs) for the platform's data and each tenant's own database. */
export async function forEachDataApp(app: App, fn: (data: App) => Promise<void>): Promise<void> {
  await fn(app);
  const rows = await app.platform.query<{ tenant_id: string; sealed: string }>(
    'select tenant_id, connection_string_sealed as sealed from database_configs order by tenant_id',
  );
  for (const row of rows) {
    try {
      await fn(await databaseApp(app, row.sealed));
    } catch (err) {
      // One tenant's unreachable database must not stop the sweep for the others.
      app.log.warn({ err, tenant_id: row.tenant_id }, "a sweep could not reach a tenant's own database");
    }
  }
}

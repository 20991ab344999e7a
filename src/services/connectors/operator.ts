import type { App } from '../../core/context.ts';
import { iso } from '../../core/ids.ts';
import type { ConnectionRow } from './connections.ts';

/** The operator's view of syncs across tenants: per provider, runs and failed runs in the last hours, and the latest run. */
export async function connectorHealth(app: App, hours: number) {
  const rows = await app.platform.query<{ provider: ConnectionRow['provider']; runs: number; errors: number; last_run: Date | null }>(
    `select c.provider, count(*)::int as runs, count(*) filter (where r.status = 'error')::int as errors, max(r.created_at) as last_run
       from connection_runs r join connections c on c.tenant_id = r.tenant_id and c.id = r.connection_id
      where r.created_at > now() - make_interval(hours => $1)
      group by c.provider order by c.provider`,
    [hours],
  );
  return { hours, providers: rows.map((r) => ({ ...r, last_run: iso(r.last_run) })) };
}

/** How many connections are in each status, across tenants. */
export async function connectionStatusCounts(app: App) {
  return app.platform.query<{ status: ConnectionRow['status']; n: number }>(
    'select status, count(*)::int as n from connections group by status order by status',
  );
}

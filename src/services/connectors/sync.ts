import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import type { Provider } from '../../schemas/providers/index.ts';
import { targetRule } from '../../ports/public-target.ts';
import { actFor, actingJob } from '../access/grants.ts';
import { readText } from '../files/read-text.ts';
import { findConnection, type ConnectionRow } from './connections.ts';
import { providerHttp } from './http.ts';
import { freshCredentials } from './oauth.ts';
import type { Connector } from './providers/connector.ts';
import { connectors } from './providers/index.ts';
import { laterCursor, storeRecords } from './records.ts';

/** Failed syncs in a row that pause a connection. */
export const PAUSE_AFTER = 5;
/**
 * How long a sync holds its connection without storing a page: it renews the lease after every
 * page, so only a sync cut short by a crash (or a provider page slower than this) lets another in.
 */
const LEASE_MINUTES = 30;

/**
 * One scheduled sync, run as the connection (what it stores has the connection as created_by) and
 * writing its collection. A failed sync is recorded on the connection and retried by the next
 * schedule, not by the queue.
 */
export const connectorSyncJob = actingJob(
  defineJob('connector_sync', z.object({ tenant_id: z.uuid(), connection_id: z.uuid() }), { maxAttempts: 1, lane: 'sync' }),
  {
    subject: async (app, { tenant_id, connection_id }) => {
      const [conn] = await app.db.query<ConnectionRow>('select * from connections where tenant_id = $1 and id = $2', [tenant_id, connection_id]);
      return conn && { actor: { service: `${conn.provider} connection${conn.name ? ` "${conn.name}"` : ''}`, id: conn.id }, collection: conn.collection };
    },
    grant: { field: 'collection', permission: 'write' },
  },
);

export interface SyncResult {
  synced: number;
  cursor: string | null;
  status: ConnectionRow['status'];
  last_error: string | null;
}

/** The connector of a provider the service syncs; undefined for one the tenant runs itself. */
const connectorOf = (provider: Provider): Connector | undefined => (connectors as Partial<Record<Provider, Connector>>)[provider];

/** Where a sync calls the provider: the URL the operator set for it, or the tenant's own site its config names. */
function apiUrlOf(app: App, connector: Connector, config: Record<string, unknown>): string {
  const { api } = connector.sync;
  const url = 'env' in api ? app.config.connectors.apiUrls[connector.name] : config[api.configField];
  if (typeof url !== 'string') throw new Error(`No API URL for ${connector.name}`);
  return url.replace(/\/+$/, '');
}

/**
 * Takes the connection's lease: one sync per connection at a time, on both databases and whoever
 * starts it (the scheduler's job or a manual sync). A scheduled sync leaves a paused connection alone.
 */
async function claim(app: App, tenantId: string, id: string, scheduled: boolean): Promise<ConnectionRow | null> {
  const conn = await findConnection(app.db, tenantId, id);
  if (!connectorOf(conn.provider)) throw badRequest(`A ${conn.provider} connection is run by the tenant; the service stores it but does not sync it`);
  const [row] = await app.db.query<ConnectionRow>(
    `update connections set sync_started_at = now()
      where tenant_id = $1 and id = $2 and not ($3 and status = 'paused')
        and (sync_started_at is null or sync_started_at < now() - make_interval(mins => $4))
      returning *`,
    [tenantId, id, scheduled, LEASE_MINUTES],
  );
  if (!row && !scheduled) throw conflict('A sync of this connection is running; try again when it has finished');
  return row ?? null;
}

/**
 * What a failed sync tells the tenant: a provider's failure as a sentence (http.ts), and an answer
 * the provider's code could not read (a field missing, something else than its API at the
 * address) as that, never the program's own TypeError.
 */
function syncError(provider: string, err: unknown): string {
  if (err instanceof TypeError || err instanceof SyntaxError || err instanceof RangeError) {
    return `${provider} answered in a form its API does not have, which the sync cannot read`;
  }
  return String((err as Error)?.message ?? err) || 'The sync failed';
}

/**
 * Syncs a connection: the provider's records changed after its cursor, page by page, each page
 * stored before the next is fetched; the cursor moves only once every page is stored. A failure
 * sets `error` (and `paused` on the fifth in a row) with the provider's message, records the run,
 * and touches no other connection; what was stored before it stays, and the next sync reads it again
 * from the old cursor without duplicating it. `ctx` acts as the connection (`connectorSyncJob.acts`).
 * Null: a scheduled sync that found the connection busy, paused or gone.
 */
export async function syncConnection(ctx: AuthedCtx, id: string, scheduled = false): Promise<SyncResult | null> {
  const { app } = ctx;
  const tenantId = ctx.tenant.id;
  const conn = await claim(app, tenantId, id, scheduled);
  if (!conn) return null;
  const connector = connectorOf(conn.provider)!;
  let synced = 0;
  let cursor = conn.cursor;
  let error: string | null = null;
  try {
    const credentials = await freshCredentials(app, conn);
    const config = connector.config.parse(conn.config);
    const pages = connector.pages({
      credentials: connector.credentials.parse(credentials),
      config,
      cursor: conn.cursor,
      apiUrl: apiUrlOf(app, connector, config as Record<string, unknown>),
      http: providerHttp(conn.provider, targetRule(app.config)),
      readFile: async (file) =>
        (
          await readText(
            file.data,
            { filename: file.filename, contentType: file.contentType },
            app.config.parse,
            null,
            'Audio and video from a connector are not transcribed',
          )
        ).text,
    });
    for await (const page of pages) {
      const stored = await storeRecords(ctx, conn, page);
      synced += stored.changed;
      cursor = laterCursor(cursor, stored.cursor);
      await app.db.query('update connections set sync_started_at = now() where tenant_id = $1 and id = $2', [tenantId, id]);
    }
  } catch (err) {
    error = syncError(conn.provider, err);
    app.log.warn({ connection: id, provider: conn.provider, err }, 'connector sync failed');
  }
  return app.db.transaction(async (tx) => {
    const [row] = await tx.query<ConnectionRow>(
      error === null
        ? `update connections set cursor = $3, status = 'active', last_error = null, failures = 0, last_sync_at = now(),
             sync_started_at = null, updated_at = now() where tenant_id = $1 and id = $2 returning *`
        : `update connections set status = case when failures + 1 >= $4 then 'paused' else 'error' end, last_error = $3,
             failures = failures + 1, last_sync_at = now(), sync_started_at = null, updated_at = now()
           where tenant_id = $1 and id = $2 returning *`,
      error === null ? [tenantId, id, cursor] : [tenantId, id, error, PAUSE_AFTER],
    );
    // A connection deleted while it synced has nothing left to report on.
    await tx.query(
      `insert into connection_runs (tenant_id, id, connection_id, status, synced_count, error)
       select $1, $2, $3, $4, $5, $6 where exists (select 1 from connections where tenant_id = $1 and id = $3)`,
      [tenantId, newId(), id, error === null ? 'success' : 'error', synced, error],
    );
    return row
      ? { synced, cursor: row.cursor, status: row.status, last_error: row.last_error }
      : { synced, cursor, status: error ? 'error' : 'active', last_error: error };
  });
}

/** A sync asked for now (connections.sync, whose caller's grant invoke checked): it runs as the connection, as a scheduled one does. */
export async function syncNow(app: App, tenantId: string, id: string): Promise<SyncResult> {
  const acted = await actFor(app, connectorSyncJob.acts, { tenant_id: tenantId, connection_id: id }, randomUUID());
  if (!acted) throw notFound(`Connection ${id} not found`);
  // A connection is a service identity, which grants do not name: it is never refused.
  if ('refused' in acted) throw forbidden(acted.refused);
  return (await syncConnection(acted.ctx, id))!;
}

/** Providers the service syncs itself (all but the tenant-run ones). */
const synced = Object.keys(connectors);

/**
 * The scheduler's minute: every connection that is not paused (active, or in error and so retried
 * until the fifth failure pauses it), not syncing now, and whose interval (config.sync_interval_minutes,
 * 60 by default) has passed since its last sync, gets a sync job; a job already waiting is not queued
 * twice. Answers the connections queued.
 */
export async function enqueueDueSyncs(app: App): Promise<string[]> {
  const due = await app.db.query<{ tenant_id: string; id: string }>(
    `select tenant_id, id from connections
      where status <> 'paused' and provider = any($1::text[])
        and (sync_started_at is null or sync_started_at < now() - make_interval(mins => $2))
        -- Left behind on the platform by a tenant that moved to its own database (that one is swept on its own).
        and not exists (select 1 from database_configs d where d.tenant_id = connections.tenant_id)
        and (last_sync_at is null or last_sync_at <= now() - make_interval(mins =>
              case when jsonb_typeof(config->'sync_interval_minutes') = 'number' then (config->>'sync_interval_minutes')::numeric::int else 60 end))`,
    [synced, LEASE_MINUTES],
  );
  for (const c of due) await app.jobs.enqueue(app.db, connectorSyncJob, { tenant_id: c.tenant_id, connection_id: c.id }, { key: `connector_sync:${c.id}` });
  return due.map((c) => c.id);
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { App, AuthedCtx } from '../../context.ts';
import { badRequest, conflict } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import { actAsService } from '../access/authenticate.ts';
import { extractText } from '../files/extract.ts';
import { findConnection, type ConnectionRow } from './connections.ts';
import { providerHttp } from './http.ts';
import { freshCredentials } from './oauth.ts';
import { connectors } from './providers/index.ts';
import { laterCursor, storeRecords } from './records.ts';

/** Failed syncs in a row that pause a connection (api.md 8). */
export const PAUSE_AFTER = 5;
/**
 * How long a sync holds its connection without storing a page: it renews the lease after every
 * page, so only a sync cut short by a crash (or a provider page slower than this) lets another in.
 */
const LEASE_MINUTES = 30;

/** One scheduled sync. A failed sync is recorded on the connection and retried by the next schedule, not by the queue. */
export const connectorSyncJob = defineJob('connector_sync', z.object({ tenant_id: z.uuid(), connection_id: z.uuid() }), { maxAttempts: 1 });

export interface SyncResult {
  synced: number;
  cursor: string | null;
  status: ConnectionRow['status'];
  last_error: string | null;
}

/**
 * Takes the connection's lease: one sync per connection at a time, on both databases and whoever
 * starts it (the scheduler's job or a manual sync). A scheduled sync leaves a paused connection alone.
 */
async function claim(app: App, tenantId: string, id: string, scheduled: boolean): Promise<ConnectionRow | null> {
  const conn = await findConnection(app.db, tenantId, id);
  if (!connectors[conn.provider].pages) throw badRequest(`A ${conn.provider} connection is run by the tenant; the service stores it but does not sync it`);
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

/** The connection's records written as its own agent: created_by is the connection. */
async function actAsConnection(app: App, conn: ConnectionRow): Promise<AuthedCtx | null> {
  const ctx = await actAsService(app, conn.tenant_id, '', randomUUID());
  const label = `${conn.provider} connection${conn.name ? ` "${conn.name}"` : ''}`;
  return ctx && { ...ctx, agent: { id: conn.id, label, read_only: false } };
}

/**
 * Syncs a connection: the provider's records changed after its cursor, page by page, each page
 * stored before the next is fetched; the cursor moves only once every page is stored. A failure
 * sets `error` (and `paused` on the fifth in a row) with the provider's message, records the run,
 * and touches no other connection; what was stored before it stays, and the next sync reads it again
 * from the old cursor without duplicating it. Null: a scheduled sync that found the connection
 * busy, paused or gone.
 */
export async function syncConnection(app: App, tenantId: string, id: string, scheduled = false): Promise<SyncResult | null> {
  const conn = await claim(app, tenantId, id, scheduled);
  if (!conn) return null;
  const ctx = await actAsConnection(app, conn);
  if (!ctx) return null;
  const connector = connectors[conn.provider];
  let synced = 0;
  let cursor = conn.cursor;
  let error: string | null = null;
  try {
    const credentials = await freshCredentials(app, conn);
    const config = connector.config.parse(conn.config) as { base_url?: string };
    const apiUrl = conn.provider === 'confluence' ? config.base_url! : app.config.connectors.apiUrls[conn.provider as keyof typeof app.config.connectors.apiUrls];
    const pages = connector.pages!({
      credentials: connector.credentials.parse(credentials),
      config,
      cursor: conn.cursor,
      apiUrl: apiUrl.replace(/\/+$/, ''),
      http: providerHttp(conn.provider),
      readFile: async (file) => (await extractText(file.data, { filename: file.filename, contentType: file.contentType }, null, 'Audio and video from a connector are not transcribed')).text,
    });
    for await (const page of pages) {
      const stored = await storeRecords(ctx, conn, page);
      synced += stored.changed;
      cursor = laterCursor(cursor, stored.cursor);
      await app.db.query('update connections set sync_started_at = now() where tenant_id = $1 and id = $2', [tenantId, id]);
    }
  } catch (err) {
    error = String((err as Error)?.message ?? err) || 'The sync failed';
    app.log.warn({ connection: id, provider: conn.provider, err: error }, 'connector sync failed');
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
    return row ? { synced, cursor: row.cursor, status: row.status, last_error: row.last_error } : { synced, cursor, status: error ? 'error' : 'active', last_error: error };
  });
}

/** Providers the service syncs itself (all but the tenant-run ones). */
const synced = Object.values(connectors).flatMap((c) => (c.pages ? [c.provider] : []));

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

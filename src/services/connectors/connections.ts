import { z, type ZodType } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest, notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { checkTargetUrl, targetRule } from '../../ports/public-target.ts';
import type { ConnectionCreate, ConnectionView, ProviderView } from '../../schemas/connectors.ts';
import { providers, providerSpec, type OAuthProvider, type Provider } from '../../schemas/providers/index.ts';
import { callerIds, collectionLimit, readableCollectionSql } from '../access/grants.ts';
import { ensureCollection } from '../memory/collections.ts';

export interface ConnectionRow {
  tenant_id: string;
  id: string;
  provider: Provider;
  name: string | null;
  collection: string;
  container_tag: string | null;
  config: Record<string, unknown>;
  credentials: string;
  status: 'active' | 'paused' | 'error';
  last_error: string | null;
  cursor: string | null;
  failures: number;
  last_sync_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The connection as clients see it: never its credentials. */
export function toConnectionView(row: ConnectionRow): ConnectionView {
  return {
    id: row.id,
    provider: row.provider,
    name: row.name,
    collection: row.collection,
    container_tag: row.container_tag,
    config: row.config,
    status: row.status,
    last_error: row.last_error,
    cursor: row.cursor,
    consecutive_failures: row.failures,
    last_sync_at: iso(row.last_sync_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

/** What the registry says of each provider, made once: its fields as JSON Schema, as a form (the dashboard's) reads them. */
const described = providers.map((p) => ({
  provider: p.name,
  label: p.label,
  synced: p.sync.by === 'service',
  credentials: z.toJSONSchema(p.credentials, { io: 'input' }),
  config: z.toJSONSchema(p.config, { io: 'input' }),
}));

/** The providers a connection can read, and whether each one's OAuth app is configured on this server. */
export function listProviders(app: App): ProviderView[] {
  return described.map((d) => ({
    ...d,
    oauth: !providerSpec(d.provider).oauth ? 'none' : app.config.connectors.oauth[d.provider as OAuthProvider] ? 'available' : 'not_configured',
  }));
}

/** A provider's schema applied to one field of the request: its failures are 422s under that field's path. */
export function checkField<T>(schema: ZodType<T>, value: unknown, field: 'credentials' | 'config', provider: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((i) => ({ path: [field, ...i.path.map(String)].join('.'), message: i.message }));
  throw new AppError('UNPROCESSABLE_CONTENT', `Invalid ${provider} ${field}: ${errors[0]!.path}: ${errors[0]!.message}`, errors);
}

/** The credentials and config a provider needs, in the shape its schemas give them; 422 naming the field otherwise. */
export async function checkConnectionFields(ctx: AuthedCtx, provider: Provider, credentials: unknown, config: unknown) {
  const spec = providerSpec(provider);
  const checked = {
    credentials: checkField(spec.credentials, credentials, 'credentials', provider),
    config: checkField(spec.config, config, 'config', provider),
  };
  // A provider on the tenant's own site is called at an address the tenant chose: the rule of every such address (webhooks, LLM endpoints).
  const field = spec.sync.by === 'service' && 'configField' in spec.sync.api ? spec.sync.api.configField : null;
  const site = field && (checked.config as Record<string, unknown>)[field];
  if (typeof site === 'string') {
    await checkTargetUrl(targetRule(ctx.app.config), new URL(site)).catch((err: Error) => {
      throw badRequest(`The ${provider} ${field} is not allowed: ${err.message}`);
    });
  }
  return checked;
}

/** Stores a connection (credentials sealed); the collection is created if it does not exist yet. */
export async function insertConnection(q: Queryable, ctx: AuthedCtx, input: ConnectionCreate): Promise<ConnectionView> {
  await ensureCollection(q, ctx, input.collection, true);
  const [row] = await q.query<ConnectionRow>(
    `insert into connections (tenant_id, id, provider, name, collection, container_tag, config, credentials)
     values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) returning *`,
    [
      ctx.tenant.id,
      newId(),
      input.provider,
      input.name ?? null,
      input.collection,
      input.container_tag ?? null,
      input.config,
      ctx.app.secrets.encrypt(JSON.stringify(input.credentials)),
    ],
  );
  return toConnectionView(row!);
}

export async function createConnection(ctx: AuthedCtx, input: ConnectionCreate): Promise<ConnectionView> {
  const checked = await checkConnectionFields(ctx, input.provider, input.credentials, input.config);
  return insertConnection(ctx.app.db, ctx, { ...input, ...(checked as Pick<ConnectionCreate, 'credentials' | 'config'>) });
}

/** A connection of the tenant, or 404 (another tenant's id looks the same as a missing one). */
export async function findConnection(q: Queryable, tenantId: string, id: string): Promise<ConnectionRow> {
  const [row] = isUuid(id) ? await q.query<ConnectionRow>('select * from connections where tenant_id = $1 and id = $2', [tenantId, id]) : [];
  if (!row) throw notFound(`Connection ${id} not found`);
  return row;
}

/** The collection a connection writes to: the one whose grants apply to the calls naming the connection. */
export async function collectionOfConnection(ctx: AuthedCtx, input: { id: string }): Promise<string> {
  return (await findConnection(ctx.app.db, ctx.tenant.id, input.id)).collection;
}

/** The tenant's connections into collections the key may read, newest first. */
export async function listConnections(ctx: AuthedCtx): Promise<ConnectionView[]> {
  const rows = await ctx.app.db.query<ConnectionRow>(
    `select c.* from connections c where c.tenant_id = $1 and ${readableCollectionSql('c.collection', '$1', '$2', '$3')} order by c.created_at desc, c.id desc`,
    [ctx.tenant.id, callerIds(ctx), collectionLimit(ctx)],
  );
  return rows.map(toConnectionView);
}

/** Removes the connection, its runs and its record map; the memories it synced stay in the collection. */
export async function deleteConnection(ctx: AuthedCtx, id: string): Promise<void> {
  await findConnection(ctx.app.db, ctx.tenant.id, id);
  await ctx.app.db.query('delete from connections where tenant_id = $1 and id = $2', [ctx.tenant.id, id]);
}

export async function listRuns(ctx: AuthedCtx, id: string, limit: number) {
  await findConnection(ctx.app.db, ctx.tenant.id, id);
  const rows = await ctx.app.db.query<{ id: string; status: 'success' | 'error'; synced_count: number; error: string | null; created_at: Date }>(
    `select id, status, synced_count, error, created_at from connection_runs
      where tenant_id = $1 and connection_id = $2 order by created_at desc, id desc limit $3`,
    [ctx.tenant.id, id, limit],
  );
  return rows.map((r) => ({ ...r, created_at: iso(r.created_at)! }));
}

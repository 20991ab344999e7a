import type { AuthedCtx } from '../../context.ts';
import { badRequest, forbidden, notFound } from '../../errors.ts';
import { isUuid } from '../../ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { controlQueryable } from '../tenant-db/tenant-app.ts';

/**
 * The one place collection grants are decided. A collection is open until its first grant;
 * then only granted keys may read (can_read) or write (can_write) it. Called by `invoke` for
 * every procedure that names a collection, and by list/search code that spans collections.
 */
export async function assertCollectionAccess(ctx: AuthedCtx, collection: string, permission: 'read' | 'write'): Promise<void> {
  const [row] = await ctx.app.db.query<{ restricted: boolean; can_read: boolean | null; can_write: boolean | null }>(
    `select exists (select 1 from collection_grants where tenant_id = $1 and collection = $2) as restricted,
            g.can_read, g.can_write
       from (select 1) one
       left join collection_grants g on g.tenant_id = $1 and g.collection = $2 and g.agent_key_id = $3`,
    [ctx.tenant.id, collection, ctx.agent.id],
  );
  if (!row?.restricted) return;
  const allowed = permission === 'read' ? row.can_read : row.can_write;
  if (!allowed) throw forbidden(`This API key is not granted ${permission} access to collection "${collection}"`);
}

/**
 * SQL condition (for a query whose `$tenant` and `$agent` parameters are given) that keeps the
 * collections the agent may read: open ones and those granting it can_read. `alias.collection`
 * (or `alias.name` on the collections table) is the column compared.
 */
export function readableCollectionSql(column: string, tenantParam: string, agentParam: string): string {
  return `(not exists (select 1 from collection_grants g where g.tenant_id = ${tenantParam} and g.collection = ${column})
           or exists (select 1 from collection_grants g where g.tenant_id = ${tenantParam} and g.collection = ${column}
                        and g.agent_key_id = ${agentParam} and g.can_read))`;
}

export interface GrantView {
  agent_key_id: string;
  label: string;
  can_read: boolean;
  can_write: boolean;
}

/**
 * Runs a grant change on a collection in one transaction, serialised per collection (the
 * collection row is locked; 404 if there is none). A change that would leave the collection
 * restricted with no active, writable key granted can_write is refused: nobody could manage
 * its grants again.
 */
async function changeGrants<T>(ctx: AuthedCtx, collection: string, change: (tx: Queryable) => Promise<T>): Promise<T> {
  return ctx.app.db.transaction(async (tx) => {
    const [locked] = await tx.query('select name from collections where tenant_id = $1 and name = $2 for update', [ctx.tenant.id, collection]);
    if (!locked) throw notFound(`Collection "${collection}" not found`);
    const result = await change(tx);
    // Grants live with the collection, keys on the platform (the same database unless the tenant has its own).
    const grants = await tx.query<{ agent_key_id: string; can_write: boolean }>(
      'select agent_key_id, can_write from collection_grants where tenant_id = $1 and collection = $2',
      [ctx.tenant.id, collection],
    );
    const writers = grants.filter((g) => g.can_write).map((g) => g.agent_key_id);
    const [managed] = writers.length
      ? await controlQueryable(ctx.app, tx).query(
          'select 1 from api_keys where tenant_id = $1 and id = any($2::uuid[]) and revoked_at is null and not read_only limit 1',
          [ctx.tenant.id, writers],
        )
      : [];
    if (grants.length && !managed) {
      throw badRequest(
        `This change would leave collection "${collection}" restricted with no active key granted can_write, and nobody could manage it: ` +
          'grant can_write to a writable key first, or remove every grant to reopen it',
      );
    }
    return result;
  });
}

/**
 * Adds or changes an agent's grant; the first grant restricts the collection. The key must be
 * an active key of the tenant (a revoked key is no agent).
 */
export async function putGrant(
  ctx: AuthedCtx,
  collection: string,
  input: { agent_key_id: string; can_read: boolean; can_write: boolean },
): Promise<GrantView> {
  const keyId = input.agent_key_id;
  return changeGrants(ctx, collection, async (tx) => {
    const [key] = isUuid(keyId)
      ? await controlQueryable(ctx.app, tx).query<{ label: string }>(
          'select label from api_keys where tenant_id = $1 and id = $2 and revoked_at is null',
          [ctx.tenant.id, keyId],
        )
      : [];
    if (!key) throw notFound(`API key ${keyId} not found among the tenant's active keys`);
    const [row] = await tx.query<Omit<GrantView, 'label'>>(
      `insert into collection_grants (tenant_id, collection, agent_key_id, can_read, can_write) values ($1, $2, $3, $4, $5)
       on conflict (tenant_id, collection, agent_key_id) do update set can_read = excluded.can_read, can_write = excluded.can_write
       returning agent_key_id, can_read, can_write`,
      [ctx.tenant.id, collection, keyId, input.can_read, input.can_write],
    );
    return { ...row!, label: key.label };
  });
}

/** The grants of a collection; `restricted` is true exactly when there is at least one. */
export async function listGrants(ctx: AuthedCtx, collection: string) {
  // One read answers both whether the collection exists (its row, grants or not) and its grants.
  const rows = await ctx.app.db.query<{ [K in Exclude<keyof GrantView, 'label'>]: GrantView[K] | null }>(
    `select g.agent_key_id, g.can_read, g.can_write
       from collections c
       left join collection_grants g on g.tenant_id = c.tenant_id and g.collection = c.name
      where c.tenant_id = $1 and c.name = $2 order by g.created_at, g.agent_key_id`,
    [ctx.tenant.id, collection],
  );
  if (!rows.length) throw notFound(`Collection "${collection}" not found`);
  const granted = rows.filter((r): r is Omit<GrantView, 'label'> => r.agent_key_id !== null);
  // The keys' labels come from the platform (a revoked key's too: its grant is still listed).
  const keys = granted.length
    ? await ctx.app.platform.query<{ id: string; label: string }>('select id, label from api_keys where tenant_id = $1 and id = any($2::uuid[])', [
        ctx.tenant.id,
        granted.map((g) => g.agent_key_id),
      ])
    : [];
  const label = new Map(keys.map((k) => [k.id, k.label]));
  const grants = granted.map((g) => ({ agent_key_id: g.agent_key_id, label: label.get(g.agent_key_id) ?? '', can_read: g.can_read, can_write: g.can_write }));
  return { collection, restricted: grants.length > 0, grants };
}

/** Removes one agent's grant; removing the last one reopens the collection. */
export async function deleteGrant(ctx: AuthedCtx, collection: string, keyId: string): Promise<void> {
  await changeGrants(ctx, collection, async (tx) => {
    const rows = isUuid(keyId)
      ? await tx.query('delete from collection_grants where tenant_id = $1 and collection = $2 and agent_key_id = $3 returning agent_key_id', [
          ctx.tenant.id,
          collection,
          keyId,
        ])
      : [];
    if (!rows.length) throw notFound(`No grant for API key ${keyId} on collection "${collection}"`);
  });
}

import type { AuthedCtx } from '../../core/context.ts';
import { badRequest } from '../../core/errors.ts';
import { deleteTenantFiles } from '../storage/file-cleanup.ts';
import { eraseOwnDatabaseData } from '../tenant-db/erase.ts';

/** What the memories `m` of a query hold, in bytes (float8): texts, metadata and attached file sizes. */
export const STORAGE_BYTES = `coalesce(sum(octet_length(m.text) + octet_length(m.metadata::text)
                         + coalesce((select sum((i->>'size')::bigint) from jsonb_array_elements(m.images) i), 0)), 0)::float8`;

/**
 * Usage of the whole account. `storage_bytes` counts what the tenant stored: memory texts,
 * metadata and attached file sizes (not index or embedding overhead).
 */
export async function accountStats(ctx: AuthedCtx) {
  const [row] = await ctx.app.db.query<{ collections: number; memories: number; storage_bytes: number; added_7d: number; added_30d: number }>(
    `select (select count(*)::int from collections where tenant_id = $1) as collections,
            count(*)::int as memories,
            ${STORAGE_BYTES} as storage_bytes,
            count(*) filter (where m.created_at > now() - interval '7 days')::int as added_7d,
            count(*) filter (where m.created_at > now() - interval '30 days')::int as added_30d
       from memories m where m.tenant_id = $1`,
    [ctx.tenant.id],
  );
  return row!;
}

/**
 * Erases the account: its files first, then the tenant row, and with it (by cascade) its keys,
 * collections, memories, grants, webhook, storage config, links and audit log (and its rows in
 * its own database, if it has one). Every key
 * answers 401 from then on.
 */
export async function deleteAccount(ctx: AuthedCtx, confirm: string): Promise<{ deleted: true }> {
  if (confirm !== ctx.tenant.name) throw badRequest('confirm must be the exact name of the tenant');
  await deleteTenantFiles(ctx.app, ctx.tenant.id);
  await eraseOwnDatabaseData(ctx.app, ctx.tenant.id);
  await ctx.app.platform.transaction((tx) => tx.query('delete from tenants where id = $1', [ctx.tenant.id]));
  ctx.app.log.info({ tenant: ctx.tenant.id, agent: ctx.agent.id }, 'account deleted');
  return { deleted: true };
}

import type { AuthedCtx } from '../context.ts';
import { forbidden } from '../errors.ts';

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

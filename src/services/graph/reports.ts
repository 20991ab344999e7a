import type { AuthedCtx } from '../../context.ts';
import { iso } from '../../ids.ts';
import { getCollection } from '../memory/collections.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from '../memory/memory-view.ts';

/** Pairs of (newer fact, the fact it superseded), newest supersession first. */
export async function contradictions(ctx: AuthedCtx, collection: string, limit: number) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const superseded = await ctx.app.db.query<MemoryRow & { superseded_by: string; superseded_at: Date }>(
    `select ${MEMORY_COLUMNS}, superseded_by, superseded_at from memories
      where tenant_id = $1 and collection = $2 and superseded_by is not null
      order by superseded_at desc, id desc limit $3`,
    [ctx.tenant.id, collection, limit],
  );
  if (!superseded.length) return [];
  // The newer fact may have moved to another collection since; it is looked up by id.
  const current = await ctx.app.db.query<MemoryRow>(`select ${MEMORY_COLUMNS} from memories where tenant_id = $1 and id = any($2::uuid[])`, [
    ctx.tenant.id,
    [...new Set(superseded.map((s) => s.superseded_by))],
  ]);
  const byId = new Map(current.map((m) => [m.id, m]));
  return superseded
    .filter((s) => byId.has(s.superseded_by))
    .map((s) => ({ current: memoryView(byId.get(s.superseded_by)!), superseded: memoryView(s), superseded_at: iso(s.superseded_at)! }));
}

/** A snapshot of the collection's state; an unknown collection is `exists: false` with zero counts. */
export async function collectionHealth(ctx: AuthedCtx, collection: string, staleDays: number) {
  const params = [ctx.tenant.id, collection];
  const [[known], [counts], categories] = await Promise.all([
    ctx.app.db.query('select 1 from collections where tenant_id = $1 and name = $2', params),
    ctx.app.db.query<{ total: number; current: number; archived: number; pinned: number; stale: number; expired: number; supersessions: number }>(
      `select count(*)::int as total,
              count(*) filter (where superseded_by is null and (expires_at is null or expires_at > now()))::int as current,
              count(*) filter (where archived)::int as archived,
              count(*) filter (where pinned)::int as pinned,
              count(*) filter (where not pinned and not archived and updated_at < now() - make_interval(days => $3::int))::int as stale,
              count(*) filter (where expires_at <= now())::int as expired,
              count(*) filter (where superseded_by is not null)::int as supersessions
         from memories where tenant_id = $1 and collection = $2`,
      [...params, staleDays],
    ),
    ctx.app.db.query<{ category: string; n: number }>(
      'select category, count(*)::int as n from memories where tenant_id = $1 and collection = $2 group by category order by category',
      params,
    ),
  ]);
  const c = counts!;
  return {
    collection,
    exists: !!known,
    ...c,
    categories: Object.fromEntries(categories.map((r) => [r.category, r.n])),
    needs_attention: c.stale + c.expired + c.supersessions,
  };
}

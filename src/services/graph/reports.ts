import type { AuthedCtx } from '../../core/context.ts';
import { iso } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { getCollection } from '../memory/collections.ts';
import { currentSql, MEMORY_COLUMNS, memoryView, type MemoryRow } from '../memory/memory-view.ts';

/** Pairs of (newer fact, the fact it superseded), newest supersession first. */
export async function contradictions(ctx: AuthedCtx, collection: string, limit: number) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const superseded = await ctx.app.db.query<MemoryRow & { superseded_by: string; superseded_at: Date }>(
    `select ${MEMORY_COLUMNS}, superseded_by from memories
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

/** Retracted memories (docs/time.md, "Retraction"), the latest retraction first; each carries its `retraction`. */
export async function retractions(ctx: AuthedCtx, collection: string, limit: number) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const rows = await ctx.app.db.query<MemoryRow>(
    `select ${MEMORY_COLUMNS} from memories
      where tenant_id = $1 and collection = $2 and retraction is not null
      order by (retraction->>'retracted_at')::timestamptz desc, id desc limit $3`,
    [ctx.tenant.id, collection, limit],
  );
  return rows.map(memoryView);
}

/** The counts of collection health (docs/graph.md, "Reports and hygiene"), as the API names them. */
export interface HealthCounts {
  total: number;
  current: number;
  archived: number;
  pinned: number;
  stale: number;
  expired: number;
  supersessions: number;
  needs_attention: number;
}

/**
 * The health counts over the memories of one tenant's collection, or over every memory of every
 * tenant (`scope` null: the operator's aggregate). The one place these definitions are written.
 */
export async function healthCounts(q: Queryable, scope: { tenantId: string; collection: string } | null, staleDays: number): Promise<HealthCounts> {
  const [where, params] = scope ? ['where tenant_id = $2 and collection = $3', [staleDays, scope.tenantId, scope.collection]] : ['', [staleDays]];
  const [c] = await q.query<Omit<HealthCounts, 'needs_attention'>>(
    `select count(*)::int as total,
            count(*) filter (where ${currentSql('memories')})::int as current,
            count(*) filter (where archived)::int as archived,
            count(*) filter (where pinned)::int as pinned,
            count(*) filter (where not pinned and not archived and updated_at < now() - make_interval(days => $1::int))::int as stale,
            count(*) filter (where superseded_by is null and valid_to <= now())::int as expired,
            count(*) filter (where superseded_by is not null)::int as supersessions
       from memories ${where}`,
    params,
  );
  return { ...c!, needs_attention: c!.stale + c!.expired + c!.supersessions };
}

/** A snapshot of the collection's state; an unknown collection is `exists: false` with zero counts. */
export async function collectionHealth(ctx: AuthedCtx, collection: string, staleDays: number) {
  const params = [ctx.tenant.id, collection];
  const [[known], counts, categories] = await Promise.all([
    ctx.app.db.query('select 1 from collections where tenant_id = $1 and name = $2', params),
    healthCounts(ctx.app.db, { tenantId: ctx.tenant.id, collection }, staleDays),
    ctx.app.db.query<{ category: string; n: number }>(
      'select category, count(*)::int as n from memories where tenant_id = $1 and collection = $2 group by category order by category',
      params,
    ),
  ]);
  const { needs_attention, ...c } = counts;
  return {
    collection,
    exists: !!known,
    ...c,
    categories: Object.fromEntries(categories.map((r) => [r.category, r.n])),
    needs_attention,
  };
}

import type { AuthedCtx } from '../../core/context.ts';
import { getCollection } from '../memory/collections.ts';
import { archiveMemories, consolidateDuplicates } from '../memory/lifecycle.ts';
import { LIVE, MEMORY_COLUMNS, memoryView, type MemoryRow } from '../memory/memory-view.ts';

// Dedup considers the most recent 500 memories (docs/contract.md, "Limits").
const DEDUP_SCAN = 500;
// One archive-stale call touches at most this many memories (the oldest first); call again for more.
export const ARCHIVE_STALE_MAX = 10_000;

/** Keeper order: pinned, then highest importance, then newest. */
const keeperFirst = (a: MemoryRow, b: MemoryRow) =>
  Number(b.pinned) - Number(a.pinned) || b.importance - a.importance || b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : -1);

/**
 * Duplicate clusters among the most recent live memories. Each memory, in keeper order, that is
 * not yet in a cluster becomes a keeper and takes every unclaimed memory at least `threshold`
 * similar to it (exact cosine over the scanned set); pinned memories are never duplicates.
 * Clustering around keepers (not transitively) keeps a chain of near-matches from merging
 * memories that are not themselves alike.
 */
export async function duplicateClusters(ctx: AuthedCtx, collection: string, threshold: number) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const rows = await ctx.app.db.query<MemoryRow>(
    `select ${MEMORY_COLUMNS} from memories where tenant_id = $1 and collection = $2 and ${LIVE}
      order by created_at desc, id desc limit ${DEDUP_SCAN}`,
    [ctx.tenant.id, collection],
  );
  const pairs = await ctx.app.db.query<{ a: string; b: string; similarity: number }>(
    `with scanned as (select id, embedding from memories where tenant_id = $1 and id = any($2::uuid[]))
     select x.id as a, y.id as b, (1 - (x.embedding <=> y.embedding))::float8 as similarity
       from scanned x join scanned y on x.id < y.id
      where 1 - (x.embedding <=> y.embedding) >= $3`,
    [ctx.tenant.id, rows.map((r) => r.id), threshold],
  );
  const similar = new Map<string, Map<string, number>>();
  const link = (a: string, b: string, s: number) => similar.set(a, (similar.get(a) ?? new Map()).set(b, s));
  for (const p of pairs) {
    link(p.a, p.b, p.similarity);
    link(p.b, p.a, p.similarity);
  }
  const claimed = new Set<string>();
  const clusters: Array<{ keeper: MemoryRow; duplicates: MemoryRow[]; similarity: number }> = [];
  for (const keeper of rows.sort(keeperFirst)) {
    if (claimed.has(keeper.id)) continue;
    claimed.add(keeper.id);
    const near = similar.get(keeper.id);
    if (!near) continue;
    const duplicates = rows.filter((m) => !claimed.has(m.id) && !m.pinned && near.has(m.id));
    if (!duplicates.length) continue;
    for (const d of duplicates) claimed.add(d.id);
    clusters.push({ keeper, duplicates, similarity: Math.min(...duplicates.map((d) => near.get(d.id)!)) });
  }
  return clusters;
}

export async function dedup(ctx: AuthedCtx, collection: string, threshold: number, dryRun: boolean) {
  const clusters = await duplicateClusters(ctx, collection, threshold);
  if (dryRun) {
    return {
      clusters: clusters.map((c) => ({
        keeper: memoryView(c.keeper),
        duplicates: c.duplicates.map(memoryView),
        similarity: Math.round(c.similarity * 10_000) / 10_000,
      })),
    };
  }
  const ids = await consolidateDuplicates(
    ctx,
    collection,
    clusters.map((c) => ({ keeperId: c.keeper.id, duplicateIds: c.duplicates.map((d) => d.id) })),
  );
  return { deleted: ids.length, ids };
}

/** Not pinned, not archived, untouched (updated_at) for longer than `days`; the oldest first. */
export async function archiveStale(ctx: AuthedCtx, collection: string, days: number, dryRun: boolean) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const stale = `from memories where tenant_id = $1 and collection = $2 and not pinned and not archived
                   and updated_at < now() - make_interval(days => $3::int)`;
  const params = [ctx.tenant.id, collection, days];
  const [[count], candidates] = await Promise.all([
    ctx.app.db.query<{ n: number }>(`select count(*)::int as n ${stale}`, params),
    ctx.app.db.query<{ id: string }>(`select id ${stale} order by updated_at, id limit ${ARCHIVE_STALE_MAX}`, params),
  ]);
  const ids = candidates.map((c) => c.id);
  if (dryRun) return { would_archive: count!.n, ids };
  const archived = await ctx.app.db.transaction((tx) => archiveMemories(tx, ctx, collection, ids));
  return { archived: archived.length, ids: archived };
}

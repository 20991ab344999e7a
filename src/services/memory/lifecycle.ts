import type { App, AuthedCtx } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';
import { enqueueFileCleanup, type FileRefs } from '../storage/file-cleanup.ts';
import { archivedAmong, touchCollection } from './collections.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from './memory-view.ts';
import { noteBulkWrite } from './table-stats.ts';

/*
 * State changes made by graph memory and hygiene rather than by a client's edit: supersession,
 * archiving, duplicate consolidation, expiry and semantic forget. Each keeps the collection's
 * count and version and emits the webhook events, like every memory write.
 */

/**
 * Marks `oldId` superseded by `newId` (a newer fact that contradicts it), and closes its validity
 * where the newer one's starts (not now: a fact learnt late ended when its successor began;
 * docs/time.md). False when the old memory is gone or already superseded, so two concurrent
 * extractions cannot both claim it.
 */
export async function supersedeMemory(q: Queryable, ctx: AuthedCtx, collection: string, oldId: string, newId: string): Promise<boolean> {
  const rows = await q.query<MemoryRow>(
    `update memories o set superseded_by = $4, superseded_at = now(), updated_at = now(),
       valid_to = least(o.valid_to, greatest(o.valid_from, (select n.valid_from from memories n where n.tenant_id = $1 and n.id = $4)))
      where o.tenant_id = $1 and o.id = $2 and o.collection = $3 and o.superseded_by is null returning ${MEMORY_COLUMNS}`,
    [ctx.tenant.id, oldId, collection, newId],
  );
  if (rows.length) await touchCollection(q, ctx.tenant.id, collection, 0);
  await emitMemoryEvents(q, ctx, 'memory.updated', collection, rows.map(memoryView));
  return rows.length > 0;
}

/** Archives the given memories of the collection that are not archived yet; answers the ids it archived. */
export async function archiveMemories(q: Queryable, ctx: AuthedCtx, collection: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await q.query<MemoryRow>(
    `update memories set archived = true, updated_at = now()
      where tenant_id = $1 and collection = $2 and id = any($3::uuid[]) and not archived returning ${MEMORY_COLUMNS}`,
    [ctx.tenant.id, collection, ids],
  );
  if (rows.length) await touchCollection(q, ctx.tenant.id, collection, 0, rows.length);
  await noteBulkWrite(q, ctx.app, rows.length);
  await emitMemoryEvents(q, ctx, 'memory.updated', collection, rows.map(memoryView));
  return rows.map((r) => r.id);
}

/**
 * Deletes duplicates in favour of their keeper. Older facts that a duplicate had superseded
 * are re-linked to the keeper, so the contradictions history survives the deletion.
 */
export async function consolidateDuplicates(
  ctx: AuthedCtx,
  collection: string,
  clusters: Array<{ keeperId: string; duplicateIds: string[] }>,
): Promise<string[]> {
  return ctx.app.db.transaction(async (tx) => {
    const deleted: string[] = [];
    const files: Array<FileRefs & { archived: boolean }> = [];
    for (const { keeperId, duplicateIds } of clusters) {
      const rows = await tx.query<{ id: string; archived: boolean } & FileRefs>(
        'delete from memories where tenant_id = $1 and collection = $2 and id = any($3::uuid[]) and not pinned returning id, images, metadata, archived',
        [ctx.tenant.id, collection, duplicateIds],
      );
      files.push(...rows);
      const ids = rows.map((r) => r.id);
      await tx.query('update memories set superseded_by = $2 where tenant_id = $1 and superseded_by = any($3::uuid[])', [ctx.tenant.id, keeperId, ids]);
      deleted.push(...ids);
    }
    await enqueueFileCleanup(tx, ctx.app, ctx.tenant.id, files);
    if (deleted.length) await touchCollection(tx, ctx.tenant.id, collection, -deleted.length, -archivedAmong(files));
    await noteBulkWrite(tx, ctx.app, deleted.length);
    await emitMemoryEvents(
      tx,
      ctx,
      'memory.deleted',
      collection,
      deleted.map((id) => ({ id })),
    );
    return deleted;
  });
}

/**
 * The hourly sweep: marks facts whose validity has ended as expired, and bumps their collections'
 * versions so cached answers drop them (search already hides them from the moment `valid_to`
 * passes). Batched so one run never holds a huge transaction.
 */
export async function expireDueMemories(app: App, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await app.db.transaction(async (tx) => {
      const rows = await tx.query<{ tenant_id: string; collection: string }>(
        `update memories m set expired_at = now()
           from (select tenant_id, id from memories where valid_to <= now() and expired_at is null limit $1) due
          where m.tenant_id = due.tenant_id and m.id = due.id
          returning m.tenant_id, m.collection`,
        [batch],
      );
      const touched = new Set(rows.map((r) => JSON.stringify([r.tenant_id, r.collection])));
      for (const key of touched) {
        const [tenantId, collection] = JSON.parse(key) as [string, string];
        await touchCollection(tx, tenantId, collection, 0);
      }
      await noteBulkWrite(tx, app, rows.length);
      return rows.length;
    });
    total += n;
    if (n < batch) return total;
  }
}

/**
 * Deletes the given memories of one collection in one transaction (semantic forget, dedup).
 * Ids not in the collection are skipped; answers the ids actually deleted, in input order.
 */
export async function deleteMemories(ctx: AuthedCtx, collection: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const deleted = await ctx.app.db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; archived: boolean } & FileRefs>(
      'delete from memories where tenant_id = $1 and collection = $2 and id = any($3::uuid[]) returning id, images, metadata, archived',
      [ctx.tenant.id, collection, ids],
    );
    await enqueueFileCleanup(tx, ctx.app, ctx.tenant.id, rows);
    if (rows.length) await touchCollection(tx, ctx.tenant.id, collection, -rows.length, -archivedAmong(rows));
    await noteBulkWrite(tx, ctx.app, rows.length);
    await emitMemoryEvents(
      tx,
      ctx,
      'memory.deleted',
      collection,
      rows.map(({ id }) => ({ id })),
    );
    return new Set(rows.map((r) => r.id));
  });
  return ids.filter((id) => deleted.has(id));
}

import type { App, AuthedCtx } from '../../context.ts';
import { badRequest, notFound } from '../../errors.ts';
import { iso, isUuid, newId } from '../../ids.ts';
import { toVectorLiteral, type Queryable } from '../../ports/db/db.ts';
import type { Memory, MemoryCreate } from '../../schemas/memory.ts';
import { ensureCollection, getCollection, touchCollection } from './collections.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';

export interface MemoryRow {
  id: string;
  collection: string;
  text: string;
  importance: number;
  category: string;
  source: string;
  metadata: Record<string, unknown>;
  container_tag: string | null;
  images: Array<Omit<Memory['images'][number], 'url'> & { key?: string }>;
  created_by_id: string | null;
  created_by_label: string | null;
  pinned: boolean;
  archived: boolean;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Columns of a memory as the API shows it (never the embedding). */
export const MEMORY_COLUMNS = `id, collection, text, importance, category, source, metadata, container_tag, images,
  created_by_id, created_by_label, pinned, archived, expires_at, created_at, updated_at`;

export function memoryView(r: MemoryRow): Memory {
  return {
    id: r.id,
    collection: r.collection,
    text: r.text,
    importance: r.importance,
    category: r.category,
    source: r.source,
    metadata: r.metadata,
    container_tag: r.container_tag,
    images: r.images.map(({ key: _key, ...img }) => ({ ...img, url: null })),
    created_by: { id: r.created_by_id, label: r.created_by_label },
    pinned: r.pinned,
    archived: r.archived,
    expires_at: iso(r.expires_at),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

export interface NewMemory extends MemoryCreate {
  expires_at?: string | null;
  pinned?: boolean;
  archived?: boolean;
}

/**
 * Inserts memories with their embeddings in the caller's transaction. The embeddings are
 * computed by the caller before the transaction opens, so no transaction waits on a model.
 */
export async function insertMemories(
  q: Queryable,
  ctx: AuthedCtx,
  collection: string,
  items: NewMemory[],
  embeddings: number[][],
): Promise<Memory[]> {
  if (!items.length) return [];
  await ensureCollection(q, ctx.tenant.id, collection);
  const cols = 15;
  const values: unknown[] = [];
  const tuples = items.map((m, i) => {
    values.push(
      ctx.tenant.id, newId(), collection, m.text, m.importance, m.category, m.source, m.metadata,
      m.container_tag, ctx.agent.id, ctx.agent.label, toVectorLiteral(embeddings[i]!), m.expires_at ?? null,
      m.pinned ?? false, m.archived ?? false,
    );
    const p = (k: number) => `$${i * cols + k}`;
    return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}::jsonb, ${p(9)}, ${p(10)}, ${p(11)}, ${p(12)}::vector, ${p(13)}::timestamptz, ${p(14)}, ${p(15)})`;
  });
  const rows = await q.query<MemoryRow>(
    `insert into memories (tenant_id, id, collection, text, importance, category, source, metadata, container_tag,
                           created_by_id, created_by_label, embedding, expires_at, pinned, archived)
     values ${tuples.join(', ')} returning ${MEMORY_COLUMNS}`,
    values,
  );
  await touchCollection(q, ctx.tenant.id, collection, items.length);
  const memories = rows.map(memoryView);
  await emitMemoryEvents(q, ctx, 'memory.created', collection, memories);
  return memories;
}

export async function createMemories(ctx: AuthedCtx, collection: string, items: NewMemory[]): Promise<Memory[]> {
  const embeddings = await ctx.app.embedder.embed(items.map((m) => m.text));
  return ctx.app.db.transaction((tx) => insertMemories(tx, ctx, collection, items, embeddings));
}

/** A memory of this tenant in this collection, or 404 (other tenants' ids look the same as missing ones). */
export async function findMemory(q: Queryable, ctx: AuthedCtx, collection: string, id: string): Promise<MemoryRow> {
  const row = isUuid(id)
    ? (
        await q.query<MemoryRow>(`select ${MEMORY_COLUMNS} from memories where tenant_id = $1 and id = $2 and collection = $3`, [
          ctx.tenant.id,
          id,
          collection,
        ])
      )[0]
    : undefined;
  if (!row) throw notFound(`Memory ${id} not found in collection "${collection}"`);
  return row;
}

export async function listMemories(
  ctx: AuthedCtx,
  input: { collection: string; limit: number; offset: number; include_archived: boolean },
): Promise<Memory[]> {
  await getCollection(ctx.app.db, ctx.tenant.id, input.collection);
  const rows = await ctx.app.db.query<MemoryRow>(
    `select ${MEMORY_COLUMNS} from memories
      where tenant_id = $1 and collection = $2 and ($3 or not archived)
      order by pinned desc, created_at desc, id desc limit $4 offset $5`,
    [ctx.tenant.id, input.collection, input.include_archived, input.limit, input.offset],
  );
  return rows.map(memoryView);
}

type Patch = Partial<Pick<MemoryCreate, 'text' | 'importance' | 'category' | 'metadata'>> & {
  pinned?: boolean;
  archived?: boolean;
};

/** Changes only the supplied fields; a new text is re-embedded in the same request. */
export async function updateMemory(ctx: AuthedCtx, collection: string, id: string, patch: Patch): Promise<Memory> {
  const embedding = patch.text !== undefined ? toVectorLiteral((await ctx.app.embedder.embed([patch.text]))[0]!) : null;
  return ctx.app.db.transaction(async (tx) => {
    await findMemory(tx, ctx, collection, id);
    const [row] = await tx.query<MemoryRow>(
      `update memories set
         text = coalesce($4, text),
         embedding = coalesce($5::vector, embedding),
         importance = coalesce($6, importance),
         category = coalesce($7, category),
         metadata = coalesce($8::jsonb, metadata),
         pinned = coalesce($9, pinned),
         archived = coalesce($10, archived),
         updated_at = now()
       where tenant_id = $1 and id = $2 and collection = $3
       returning ${MEMORY_COLUMNS}`,
      [ctx.tenant.id, id, collection, patch.text ?? null, embedding, patch.importance ?? null, patch.category ?? null,
        patch.metadata ?? null, patch.pinned ?? null, patch.archived ?? null],
    );
    await touchCollection(tx, ctx.tenant.id, collection, 0);
    const memory = memoryView(row!);
    await emitMemoryEvents(tx, ctx, 'memory.updated', collection, [memory]);
    return memory;
  });
}

export async function deleteMemory(ctx: AuthedCtx, collection: string, id: string): Promise<void> {
  await ctx.app.db.transaction(async (tx) => {
    await findMemory(tx, ctx, collection, id);
    await tx.query('delete from memories where tenant_id = $1 and id = $2', [ctx.tenant.id, id]);
    await touchCollection(tx, ctx.tenant.id, collection, -1);
    await emitMemoryEvents(tx, ctx, 'memory.deleted', collection, [{ id }]);
  });
}

export async function moveMemory(ctx: AuthedCtx, collection: string, id: string, to: string): Promise<Memory> {
  if (to === collection) throw badRequest('The memory is already in that collection');
  return ctx.app.db.transaction(async (tx) => {
    await findMemory(tx, ctx, collection, id);
    await ensureCollection(tx, ctx.tenant.id, to);
    const [row] = await tx.query<MemoryRow>(
      `update memories set collection = $3, updated_at = now() where tenant_id = $1 and id = $2 returning ${MEMORY_COLUMNS}`,
      [ctx.tenant.id, id, to],
    );
    await touchCollection(tx, ctx.tenant.id, to, 1);
    await touchCollection(tx, ctx.tenant.id, collection, -1);
    const memory = memoryView(row!);
    await emitMemoryEvents(tx, ctx, 'memory.updated', to, [memory]);
    return memory;
  });
}

/**
 * Marks `oldId` superseded by `newId` (a newer fact that contradicts it). False when the old
 * memory is gone or already superseded, so two concurrent extractions cannot both claim it.
 */
export async function supersedeMemory(q: Queryable, ctx: AuthedCtx, collection: string, oldId: string, newId: string): Promise<boolean> {
  const rows = await q.query<MemoryRow>(
    `update memories set superseded_by = $4, superseded_at = now(), updated_at = now()
      where tenant_id = $1 and id = $2 and collection = $3 and superseded_by is null returning ${MEMORY_COLUMNS}`,
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
  if (rows.length) await touchCollection(q, ctx.tenant.id, collection, 0);
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
    for (const { keeperId, duplicateIds } of clusters) {
      const rows = await tx.query<{ id: string }>(
        'delete from memories where tenant_id = $1 and collection = $2 and id = any($3::uuid[]) and not pinned returning id',
        [ctx.tenant.id, collection, duplicateIds],
      );
      const ids = rows.map((r) => r.id);
      await tx.query('update memories set superseded_by = $2 where tenant_id = $1 and superseded_by = any($3::uuid[])', [
        ctx.tenant.id,
        keeperId,
        ids,
      ]);
      deleted.push(...ids);
    }
    if (deleted.length) await touchCollection(tx, ctx.tenant.id, collection, -deleted.length);
    await emitMemoryEvents(tx, ctx, 'memory.deleted', collection, deleted.map((id) => ({ id })));
    return deleted;
  });
}

/**
 * The hourly sweep: marks facts whose expiry has passed as expired (search already hides them
 * from the moment `expires_at` passes). Batched so one run never holds a huge transaction.
 */
export async function expireDueMemories(app: App, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await app.db.transaction(async (tx) => {
      const rows = await tx.query<{ tenant_id: string; collection: string }>(
        `update memories m set expired_at = now()
           from (select tenant_id, id from memories where expires_at <= now() and expired_at is null limit $1) due
          where m.tenant_id = due.tenant_id and m.id = due.id
          returning m.tenant_id, m.collection`,
        [batch],
      );
      const touched = new Set(rows.map((r) => JSON.stringify([r.tenant_id, r.collection])));
      for (const key of touched) {
        const [tenantId, collection] = JSON.parse(key) as [string, string];
        await touchCollection(tx, tenantId, collection, 0);
      }
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
    const rows = await tx.query<{ id: string }>(
      'delete from memories where tenant_id = $1 and collection = $2 and id = any($3::uuid[]) returning id',
      [ctx.tenant.id, collection, ids],
    );
    if (rows.length) await touchCollection(tx, ctx.tenant.id, collection, -rows.length);
    await emitMemoryEvents(tx, ctx, 'memory.deleted', collection, rows);
    return new Set(rows.map((r) => r.id));
  });
  return ids.filter((id) => deleted.has(id));
}

import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, conflict, invalidInput, notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import { collectionName, instant, metadataObject } from '../../schemas/fields.ts';
import { memoryCreate, timesInOrder } from '../../schemas/memory.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Grants } from '../access/grants.ts';
import { insertMemories, type NewMemory } from './memories.ts';

/** One memory of an import: a create body plus where it goes and its flags (as exported). */
const importItem = memoryCreate
  .extend({
    collection: collectionName.optional(),
    pinned: z.boolean().default(false),
    archived: z.boolean().default(false),
    // valid_to's former name, as older exports hold it.
    expires_at: instant.nullable().optional(),
  })
  .transform(({ expires_at, ...item }) => ({ ...item, valid_to: item.valid_to !== undefined ? item.valid_to : expires_at }))
  .superRefine(timesInOrder);
const importCollection = z.object({
  name: collectionName,
  description: z.string().max(2000).nullable().optional(),
  metadata: metadataObject.optional(),
});

export const DEFAULT_IMPORT_COLLECTION = 'default';
const BATCH = 100;
const MAX_REPORTED = 100;

type ImportError = { index: number; detail: string };

const issueText = (e: z.ZodError) => e.issues.map((i) => `${i.path.join('.') || '(item)'}: ${i.message}`).join('; ');

type ImportInput = { memories: unknown[]; collections?: unknown[]; into_collection?: string; idempotency_key?: string };

/**
 * Every collection an import may write, the rule admin.import declares (each is checked for write
 * before the import starts): into_collection, or the items' collections (the default one for an
 * item naming none) and the listed ones. An item whose collection is not a valid name is skipped
 * for it, so it names none here.
 */
export function importTargets(input: ImportInput): string[] {
  if (input.into_collection) return [input.into_collection];
  const named = (raw: unknown) => (typeof raw === 'object' && raw !== null ? (raw as { collection?: unknown }).collection : undefined);
  const items = input.memories.flatMap((raw) => {
    const collection = named(raw);
    return collection === undefined ? [DEFAULT_IMPORT_COLLECTION] : (collectionName.safeParse(collection).data ?? []);
  });
  const listed = (input.collections ?? []).flatMap((raw) => importCollection.safeParse(raw).data?.name ?? []);
  return [...new Set([...items, ...listed])];
}

interface ImportRow {
  id: string;
  idempotency_key: string | null;
  body_hash: string;
  total: number;
  processed: number;
  imported: number;
  skipped: number;
  collections: string[];
  errors: ImportError[];
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** An import as its answer and its status show it. */
function importView(row: ImportRow) {
  return {
    import_id: row.id,
    idempotency_key: row.idempotency_key,
    complete: row.completed_at !== null,
    total: row.total,
    imported: row.imported,
    skipped: row.skipped,
    pending: row.total - row.imported - row.skipped,
    collections: row.collections,
    errors: row.errors,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

const bodyHash = (input: ImportInput) =>
  createHash('sha256')
    .update(JSON.stringify([input.memories, input.collections ?? null, input.into_collection ?? null]))
    .digest('hex');

const COLUMNS = 'id, idempotency_key, body_hash, total, processed, imported, skipped, collections, errors, completed_at, created_at, updated_at';

/** The tenant's import with this id or idempotency key (404 otherwise). */
export async function getImport(ctx: AuthedCtx, ref: string) {
  const [row] = await ctx.app.db.query<ImportRow>(
    `select ${COLUMNS} from imports where tenant_id = $1 and (idempotency_key = $2 or id = $3::uuid) order by coalesce(idempotency_key = $2, false) desc limit 1`,
    [ctx.tenant.id, ref, isUuid(ref) ? ref : null],
  );
  if (!row) throw notFound(`Import ${ref} not found`);
  return importView(row);
}

/**
 * The import's row: a new one, or the one of the same idempotency key (the same body, or a 422).
 * Its first `processed` valid items were handled by the tries before.
 */
async function importRow(ctx: AuthedCtx, input: ImportInput, total: number, skipped: ImportError[], skippedCount: number): Promise<ImportRow> {
  const hash = bodyHash(input);
  const key = input.idempotency_key ?? null;
  const [created] = await ctx.app.db.query<ImportRow>(
    `insert into imports (tenant_id, id, idempotency_key, body_hash, total, skipped, errors) values ($1, $2, $3, $4, $5, $6, $7::jsonb)
     on conflict (tenant_id, idempotency_key) where idempotency_key is not null do nothing returning ${COLUMNS}`,
    [ctx.tenant.id, newId(), key, hash, total, skippedCount, skipped],
  );
  const [row] = created
    ? [created]
    : await ctx.app.db.query<ImportRow>(`select ${COLUMNS} from imports where tenant_id = $1 and idempotency_key = $2`, [ctx.tenant.id, key]);
  if (row!.body_hash !== hash) {
    throw invalidInput([{ path: 'idempotency_key', message: 'This Idempotency-Key was used with another body: send a new key for a new import' }]);
  }
  return row!;
}

/**
 * Imports memories (new ids, texts re-embedded) in steps of 100, each its own transaction, so no
 * transaction waits on the embedder. Every item is validated on its own: a bad item, an item of a
 * collection the key may not write (`grants`, resolved from `importTargets`), or a step that
 * cannot be stored is skipped and counted, and the rest goes on. A listed collection the key may
 * not write is not created.
 *
 * Each step commits with the import's row (docs/contract.md, "Retries and idempotency"): with an
 * idempotency key, the same body sent again answers the import as recorded once it is complete,
 * or resumes after the last step committed (a crash, a dropped connection), so nothing is stored
 * twice. Two requests running the same import at once: the second to commit a step is refused
 * (409) and its step rolled back.
 */
export async function importAccount(ctx: AuthedCtx, input: ImportInput, grants: Grants) {
  const errors: ImportError[] = [];
  let skippedCount = 0;
  const skip = (index: number, detail: string) => {
    skippedCount++;
    if (errors.length < MAX_REPORTED) errors.push({ index, detail });
  };
  const valid: Array<{ index: number; collection: string; item: NewMemory }> = [];
  for (const [index, raw] of input.memories.entries()) {
    const parsed = importItem.safeParse(raw);
    if (!parsed.success) {
      skip(index, issueText(parsed.error));
      continue;
    }
    const { collection, ...item } = parsed.data;
    const target = input.into_collection ?? collection ?? DEFAULT_IMPORT_COLLECTION;
    if (!grants.allows(target)) skip(index, `this API key may not write collection "${target}"`);
    else valid.push({ index, collection: target, item });
  }
  const row = await importRow(ctx, input, input.memories.length, errors, skippedCount);
  if (row.completed_at) return importView(row);

  // Listed collections are created with their description and metadata (existing ones are
  // left as they are). With into_collection everything lands in that one collection.
  const listed: string[] = [];
  if (!input.into_collection) {
    for (const raw of input.collections ?? []) {
      const c = importCollection.safeParse(raw);
      if (!c.success || !grants.allows(c.data.name)) continue;
      await ctx.app.db.query(
        'insert into collections (tenant_id, name, description, metadata) values ($1, $2, $3, $4::jsonb) on conflict (tenant_id, name) do nothing',
        [ctx.tenant.id, c.data.name, c.data.description ?? null, c.data.metadata ?? {}],
      );
      listed.push(c.data.name);
    }
  }

  // A step's counts move only from what this request last read: another request that moved them meanwhile wins.
  let processed = row.processed;
  const advance = async (q: Queryable, step: number, fields: { imported: number; errors: ImportError[]; collections: string[] }) => {
    const moved = await q.query(
      `update imports set processed = processed + $4, imported = imported + $5, skipped = skipped + $4 - $5,
              errors = (errors || $6::jsonb), collections = (select coalesce(jsonb_agg(distinct c order by c), '[]'::jsonb) from jsonb_array_elements_text(collections || $7::jsonb) c),
              updated_at = now()
        where tenant_id = $1 and id = $2 and processed = $3 and completed_at is null returning id`,
      [ctx.tenant.id, row.id, processed, step, fields.imported, fields.errors, fields.collections],
    );
    if (!moved.length) throw conflict(`Import ${row.id} is being run by another request: GET /v1/memory/admin/import/${row.id} tells how far it got`);
  };
  // Room left in the recorded errors (the first 100 of the import's whole life).
  let room = Math.max(0, MAX_REPORTED - row.errors.length);

  while (processed < valid.length) {
    const batch = valid.slice(processed, processed + BATCH);
    const names = [...new Set(batch.map((b) => b.collection))];
    try {
      const vectors = await ctx.app.embedder.embed(batch.map((b) => b.item.text));
      await ctx.app.db.transaction(async (tx) => {
        // First, so that a second request running this import waits here and is refused, before it inserts anything.
        await advance(tx, batch.length, { imported: batch.length, errors: [], collections: names });
        for (const name of names) {
          const group = batch.flatMap((b, i) => (b.collection === name ? [{ item: b.item, embedding: vectors[i]! }] : []));
          await insertMemories(
            tx,
            ctx,
            name,
            group.map((g) => g.item),
            group.map((g) => g.embedding),
          );
        }
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') throw err;
      ctx.app.log.error({ err, requestId: ctx.requestId }, 'import batch failed');
      // With a key the step stays pending: the same request resumes at it, so its items are
      // stored by a retry rather than reported skipped for good. Without one nothing can resume.
      if (row.idempotency_key !== null) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `Import ${row.id} stopped at its item ${batch[0]!.index}: storing a step failed (request ${ctx.requestId}); ${processed} items before it are handled. Send the same request with the same Idempotency-Key to resume there`,
        );
      }
      const failed = batch.slice(0, room).map((b) => ({ index: b.index, detail: `could not be stored (request ${ctx.requestId})` }));
      room -= failed.length;
      await advance(ctx.app.db, batch.length, { imported: 0, errors: failed, collections: [] });
    }
    processed += batch.length;
  }
  const [done] = await ctx.app.db.query<ImportRow>(
    `update imports set completed_at = now(), updated_at = now(),
            collections = (select coalesce(jsonb_agg(distinct c order by c), '[]'::jsonb) from jsonb_array_elements_text(collections || $3::jsonb) c)
      where tenant_id = $1 and id = $2 returning ${COLUMNS}`,
    [ctx.tenant.id, row.id, listed],
  );
  return importView(done!);
}

/** How long an import's record, and so its Idempotency-Key, is kept after its last step (docs/contract.md, "Retries and idempotency"). */
export const IMPORT_KEPT_DAYS = 7;

/** Drops the import records of `data` (a data database) untouched for IMPORT_KEPT_DAYS: the hourly writes sweep. */
export async function dropOldImports(data: App): Promise<number> {
  const rows = await data.db.query(`delete from imports where updated_at < now() - make_interval(days => $1) returning id`, [IMPORT_KEPT_DAYS]);
  return rows.length;
}

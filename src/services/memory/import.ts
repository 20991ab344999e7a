import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, conflict, invalidInput, notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import { collectionName, instant, metadataObject } from '../../schemas/fields.ts';
import { memoryCreate, timesInOrder } from '../../schemas/memory.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Grants } from '../access/grants.ts';
import { detectFormat, formatNamed, IMPORT_FORMAT_NAMES, ORGMEM_FORMAT } from './import-formats/index.ts';
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

export type ImportInput = {
  memories?: unknown[];
  collections?: unknown[];
  data?: unknown;
  format?: string;
  include_messages?: boolean;
  into_collection?: string;
  idempotency_key?: string;
};

/** The most records one import reads from a file, as from `memories`. */
export const MAX_IMPORT_RECORDS = 100_000;

/**
 * One record to import, in the body's order: an item (an orgmem import item), with the key that
 * stores it once when it comes from another store (`<format>:<its id there>`, kept in the
 * memory's metadata as `import_source`), or why it cannot be read.
 */
type Entry = { index: number; raw: unknown; sourceKey?: string } | { index: number; error: string };
interface ReadInput {
  entries: Entry[];
  collections: unknown[];
}

/** The body read once per request: the pipeline's grant rule and the handler both need it. */
const readCache = new WeakMap<ImportInput, ReadInput>();

/**
 * The records of the body: `memories` as they are (orgmem's own items), or the file in `data`,
 * of the named or detected format, each record made an item by its format's parser. A file that
 * is no known format, or not the named one, is a 422 naming `data`.
 */
export function readImport(input: ImportInput): ReadInput {
  const cached = readCache.get(input);
  if (cached) return cached;
  const read = readUncached(input);
  readCache.set(input, read);
  return read;
}

function readUncached(input: ImportInput): ReadInput {
  const refuse = (message: string) => invalidInput([{ path: 'data', message }]);
  if (input.data === undefined) return { entries: (input.memories ?? []).map((raw, index) => ({ index, raw })), collections: input.collections ?? [] };
  const name = input.format ?? detectFormat(input.data);
  if (!name) throw refuse(`not a format the import knows: name it with format (${IMPORT_FORMAT_NAMES.join(', ')})`);
  if (name === ORGMEM_FORMAT) {
    const file = input.data as { memories?: unknown; collections?: unknown };
    if (typeof file !== 'object' || file === null || !Array.isArray(file.memories))
      throw refuse('an orgmem export is {"memories": [...], "collections": [...]}');
    if (file.memories.length > MAX_IMPORT_RECORDS) throw refuse(`more than ${MAX_IMPORT_RECORDS} memories: split the file`);
    return {
      entries: file.memories.map((raw: unknown, index: number) => ({ index, raw })),
      collections: Array.isArray(file.collections) ? file.collections : [],
    };
  }
  const records = formatNamed(name)!.parse(input.data, { includeMessages: input.include_messages ?? false });
  if (typeof records === 'string') throw refuse(`not a ${name} file: ${records}`);
  if (records.length > MAX_IMPORT_RECORDS) throw refuse(`more than ${MAX_IMPORT_RECORDS} records: split the file`);
  const firstAt = new Map<string, string>();
  const entries = records.map((r, index): Entry => {
    if ('error' in r) return { index, error: r.error };
    const sourceKey = `${name}:${r.sourceId}`;
    const earlier = firstAt.get(sourceKey);
    if (earlier) return { index, error: `${r.at}: the same ${name} id as ${earlier}` };
    firstAt.set(sourceKey, r.at);
    return { index, sourceKey, raw: { ...r.item, source: 'import', metadata: { ...r.item.metadata, import_source: sourceKey } } };
  });
  return { entries, collections: [] };
}

/**
 * Every collection an import may write, the rule admin.import declares (each is checked for write
 * before the import starts): into_collection, or the items' collections (the default one for an
 * item naming none) and the listed ones. An item whose collection is not a valid name is skipped
 * for it, so it names none here.
 */
export function importTargets(input: ImportInput): string[] {
  if (input.into_collection) return [input.into_collection];
  const named = (raw: unknown) => (typeof raw === 'object' && raw !== null ? (raw as { collection?: unknown }).collection : undefined);
  const read = readImport(input);
  const items = read.entries.flatMap((entry) => {
    if (!('raw' in entry)) return [];
    const collection = named(entry.raw);
    return collection === undefined ? [DEFAULT_IMPORT_COLLECTION] : (collectionName.safeParse(collection).data ?? []);
  });
  const listed = read.collections.flatMap((raw) => importCollection.safeParse(raw).data?.name ?? []);
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
  already_imported: number;
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
    already_imported: row.already_imported,
    pending: row.total - row.imported - row.skipped - row.already_imported,
    collections: row.collections,
    errors: row.errors,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

// The fields of the first imports hash as they did, so that their keys still resume; a file in data adds its own.
const bodyHash = (input: ImportInput) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        input.memories ?? null,
        input.collections ?? null,
        input.into_collection ?? null,
        ...(input.data === undefined ? [] : [input.data, input.format ?? null, input.include_messages ?? false]),
      ]),
    )
    .digest('hex');

const COLUMNS =
  'id, idempotency_key, body_hash, total, processed, imported, skipped, already_imported, collections, errors, completed_at, created_at, updated_at';

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
 *
 * A record from another store's file is stored once whatever the key: one whose `import_source`
 * a memory of the tenant already has is counted as `already_imported` (docs/import.md).
 */
export async function importAccount(ctx: AuthedCtx, input: ImportInput, grants: Grants) {
  const errors: ImportError[] = [];
  let skippedCount = 0;
  const skip = (index: number, detail: string) => {
    skippedCount++;
    if (errors.length < MAX_REPORTED) errors.push({ index, detail });
  };
  const read = readImport(input);
  const valid: Array<{ index: number; collection: string; item: NewMemory; sourceKey?: string }> = [];
  for (const entry of read.entries) {
    if ('error' in entry) {
      skip(entry.index, entry.error);
      continue;
    }
    const parsed = importItem.safeParse(entry.raw);
    if (!parsed.success) {
      skip(entry.index, issueText(parsed.error));
      continue;
    }
    const { collection, ...item } = parsed.data;
    const target = input.into_collection ?? collection ?? DEFAULT_IMPORT_COLLECTION;
    if (!grants.allows(target)) skip(entry.index, `this API key may not write collection "${target}"`);
    else valid.push({ index: entry.index, collection: target, item, sourceKey: entry.sourceKey });
  }
  const row = await importRow(ctx, input, read.entries.length, errors, skippedCount);
  if (row.completed_at) return importView(row);

  // Listed collections are created with their description and metadata (existing ones are
  // left as they are). With into_collection everything lands in that one collection.
  const listed: string[] = [];
  if (!input.into_collection) {
    for (const raw of read.collections) {
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
  const advance = async (q: Queryable, step: number, fields: { imported: number; already: number; errors: ImportError[]; collections: string[] }) => {
    const moved = await q.query(
      `update imports set processed = processed + $4, imported = imported + $5, already_imported = already_imported + $8,
              skipped = skipped + $4 - $5 - $8,
              errors = (errors || $6::jsonb), collections = (select coalesce(jsonb_agg(distinct c order by c), '[]'::jsonb) from jsonb_array_elements_text(collections || $7::jsonb) c),
              updated_at = now()
        where tenant_id = $1 and id = $2 and processed = $3 and completed_at is null returning id`,
      [ctx.tenant.id, row.id, processed, step, fields.imported, fields.errors, fields.collections, fields.already],
    );
    if (!moved.length) throw conflict(`Import ${row.id} is being run by another request: GET /v1/memory/admin/import/${row.id} tells how far it got`);
  };
  // Room left in the recorded errors (the first 100 of the import's whole life).
  let room = Math.max(0, MAX_REPORTED - row.errors.length);

  while (processed < valid.length) {
    const batch = valid.slice(processed, processed + BATCH);
    try {
      // Records stored before (by an earlier import of the same file) are neither embedded nor stored again.
      const before = await storedSources(ctx.app.db, ctx, batch);
      const fresh = batch.filter((b) => !b.sourceKey || !before.has(b.sourceKey));
      const vectors = fresh.length ? await ctx.app.embedder.embed(fresh.map((b) => b.item.text)) : [];
      await ctx.app.db.transaction(async (tx) => {
        // Two imports of the same file at once: the second waits here, then finds the first's memories.
        if (ctx.app.db.kind === 'postgres' && fresh.some((b) => b.sourceKey))
          await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`import:${ctx.tenant.id}`]);
        const now = await storedSources(tx, ctx, fresh);
        const store = fresh.flatMap((b, i) => (b.sourceKey && now.has(b.sourceKey) ? [] : [{ ...b, embedding: vectors[i]! }]));
        const names = [...new Set(store.map((b) => b.collection))];
        // First, so that a second request running this import waits here and is refused, before it inserts anything.
        await advance(tx, batch.length, { imported: store.length, already: batch.length - store.length, errors: [], collections: names });
        for (const name of names) {
          const group = store.filter((b) => b.collection === name);
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
      await advance(ctx.app.db, batch.length, { imported: 0, already: 0, errors: failed, collections: [] });
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

/** The source keys of `batch` that a memory of the tenant already holds (`metadata.import_source`). */
async function storedSources(q: Queryable, ctx: AuthedCtx, batch: Array<{ sourceKey?: string }>): Promise<Set<string>> {
  const keys = batch.flatMap((b) => (b.sourceKey ? [b.sourceKey] : []));
  if (!keys.length) return new Set();
  const rows = await q.query<{ key: string }>(
    `select metadata->>'import_source' as key from memories where tenant_id = $1 and metadata ? 'import_source' and metadata->>'import_source' = any($2::text[])`,
    [ctx.tenant.id, keys],
  );
  return new Set(rows.map((r) => r.key));
}

/** How long an import's record, and so its Idempotency-Key, is kept after its last step (docs/contract.md, "Retries and idempotency"). */
export const IMPORT_KEPT_DAYS = 7;

/** Drops the import records of `data` (a data database) untouched for IMPORT_KEPT_DAYS: the hourly writes sweep. */
export async function dropOldImports(data: App): Promise<number> {
  const rows = await data.db.query(`delete from imports where updated_at < now() - make_interval(days => $1) returning id`, [IMPORT_KEPT_DAYS]);
  return rows.length;
}

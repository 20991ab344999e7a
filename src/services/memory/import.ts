import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { invalidInput, notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import { collectionName, instant, metadataObject } from '../../schemas/fields.ts';
import { memoryCreate, timesInOrder } from '../../schemas/memory.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import { actingJob, type Grants } from '../access/grants.ts';
import { detectFormat, formatNamed, IMPORT_FORMAT_NAMES, ORGMEM_FORMAT } from './import-formats/index.ts';
import type { NewMemory } from './memories.ts';

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
/** The first errors an import records: its status lists these, and counts the rest. */
export const MAX_REPORTED = 100;

export type ImportError = { index: number; detail: string };

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
  state: ImportState;
  error: string | null;
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

export type ImportState = 'queued' | 'running' | 'done' | 'failed';

/** An import as its answer and its status show it. */
function importView(row: ImportRow) {
  return {
    import_id: row.id,
    idempotency_key: row.idempotency_key,
    state: row.state,
    complete: row.completed_at !== null,
    error: row.error,
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

export const IMPORT_COLUMNS =
  'id, idempotency_key, body_hash, state, error, total, processed, imported, skipped, already_imported, collections, errors, completed_at, created_at, updated_at';

/** The tenant's import with this id or idempotency key (404 otherwise). */
export async function getImport(ctx: AuthedCtx, ref: string) {
  const [row] = await ctx.app.db.query<ImportRow>(
    `select ${IMPORT_COLUMNS} from imports where tenant_id = $1 and (idempotency_key = $2 or id = $3::uuid) order by coalesce(idempotency_key = $2, false) desc limit 1`,
    [ctx.tenant.id, ref, isUuid(ref) ? ref : null],
  );
  if (!row) throw notFound(`Import ${ref} not found`);
  return importView(row);
}

/** Tries of an import's job: a step that fails (the embedder down) is tried again from where it stopped, backing off. */
export const IMPORT_TRIES = 5;

/**
 * An import's job: it stores the import's staged records as the key that sent it
 * (docs/import.md); each step checks that key's grants as they are then.
 */
export const importJob = actingJob(defineJob('import', z.object({ tenant_id: z.uuid(), import_id: z.uuid() }), { maxAttempts: IMPORT_TRIES, lane: 'import' }), {
  subject: async (app, { tenant_id, import_id }) => {
    const [row] = await app.db.query<{ agent_id: string }>(
      `select agent_id from imports where tenant_id = $1 and id = $2 and agent_id is not null and state in ('queued', 'running')`,
      [tenant_id, import_id],
    );
    // An import writes many collections: each step resolves the grants of its own (import-run.ts), so none is named here.
    return row && { actor: { agent_id: row.agent_id }, collection: '' };
  },
  grant: { collections: () => [], permission: 'write', partial: true },
});

/** A staged record: where it goes, the key that stores it once, and the memory to create. */
interface Staged {
  index: number;
  collection: string;
  item: NewMemory;
  sourceKey?: string;
}

/** Stages records in one statement per STAGE_ROWS (a file of 100,000 records is 100 statements). */
const STAGE_ROWS = 1000;

async function stage(q: Queryable, tenantId: string, importId: string, records: Staged[]): Promise<void> {
  for (let from = 0; from < records.length; from += STAGE_ROWS) {
    const rows = records.slice(from, from + STAGE_ROWS).map((r, i) => ({
      position: from + i,
      source_index: r.index,
      collection: r.collection,
      source_key: r.sourceKey ?? null,
      item: r.item,
    }));
    // A retry of a failed import stages again what its first request staged: the same body gives the same records.
    await q.query(
      `insert into import_records (tenant_id, import_id, position, source_index, collection, source_key, item)
       select $1, $2, r.position, r.source_index, r.collection, r.source_key, r.item
         from jsonb_to_recordset($3::jsonb) as r(position int, source_index int, collection text, source_key text, item jsonb)
       on conflict (tenant_id, import_id, position) do nothing`,
      [tenantId, importId, rows],
    );
  }
}

/**
 * Starts an import (docs/import.md): every record is read and validated now, so a file that is no
 * known format is a 422 and nothing is stored; a bad record, or one of a collection the key may
 * not write (`grants`, resolved from `importTargets`), is skipped and counted at once. The valid
 * records are staged with the import's row and its job in one transaction, and the answer is the
 * import as it starts: its job stores the records in steps (import-run.ts). A listed collection is
 * created now (one the key may not write is not).
 *
 * With an idempotency key (docs/contract.md, "Retries and idempotency"), the same body answers the
 * import of the first request as it stands, storing nothing twice: one that failed (its job out of
 * tries) is queued again and goes on at its first record not stored. Another body is a 422.
 */
export async function startImport(ctx: AuthedCtx, input: ImportInput, grants: Grants) {
  const errors: ImportError[] = [];
  let skippedCount = 0;
  const skip = (index: number, detail: string) => {
    skippedCount++;
    if (errors.length < MAX_REPORTED) errors.push({ index, detail });
  };
  const read = readImport(input);
  const valid: Staged[] = [];
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
  const listed = input.into_collection
    ? []
    : read.collections.flatMap((raw) => {
        const c = importCollection.safeParse(raw);
        return c.success && grants.allows(c.data.name) ? [c.data] : [];
      });

  const hash = bodyHash(input);
  const key = input.idempotency_key ?? null;
  return ctx.app.db.transaction(async (tx) => {
    const [created] = await tx.query<ImportRow>(
      `insert into imports (tenant_id, id, idempotency_key, body_hash, total, skipped, errors, state, agent_id, listed)
       values ($1, $2, $3, $4, $5, $6, $7::jsonb, 'queued', $8, $9::jsonb)
       on conflict (tenant_id, idempotency_key) where idempotency_key is not null do nothing returning ${IMPORT_COLUMNS}`,
      [ctx.tenant.id, newId(), key, hash, read.entries.length, skippedCount, errors, ctx.agent.id, listed.map((c) => c.name)],
    );
    let row = created;
    if (!row) {
      [row] = await tx.query<ImportRow>(`select ${IMPORT_COLUMNS} from imports where tenant_id = $1 and idempotency_key = $2 for update`, [ctx.tenant.id, key]);
      if (row!.body_hash !== hash) {
        throw invalidInput([{ path: 'idempotency_key', message: 'This Idempotency-Key was used with another body: send a new key for a new import' }]);
      }
      // Queued or running: its job goes on; done: as recorded. A failed one is queued again, as this key now sends it.
      if (row!.state !== 'failed') return importView(row!);
      [row] = await tx.query<ImportRow>(
        `update imports set state = 'queued', error = null, agent_id = $3, updated_at = now() where tenant_id = $1 and id = $2 returning ${IMPORT_COLUMNS}`,
        [ctx.tenant.id, row!.id, ctx.agent.id],
      );
    }
    // Listed collections are created with their description and metadata (existing ones are left as they are).
    for (const c of listed) {
      await tx.query(
        'insert into collections (tenant_id, name, description, metadata) values ($1, $2, $3, $4::jsonb) on conflict (tenant_id, name) do nothing',
        [ctx.tenant.id, c.name, c.description ?? null, c.metadata ?? {}],
      );
    }
    await stage(tx, ctx.tenant.id, row!.id, valid);
    await ctx.app.jobs.enqueue(tx, importJob, { tenant_id: ctx.tenant.id, import_id: row!.id }, { key: `import:${row!.id}` });
    return importView(row!);
  });
}

/** How long an import's record, and so its Idempotency-Key, is kept after its last step (docs/contract.md, "Retries and idempotency"). */
export const IMPORT_KEPT_DAYS = 7;

/** Drops the import records of `data` (a data database) untouched for IMPORT_KEPT_DAYS: the hourly writes sweep. */
export async function dropOldImports(data: App): Promise<number> {
  const rows = await data.db.query(`delete from imports where updated_at < now() - make_interval(days => $1) returning id`, [IMPORT_KEPT_DAYS]);
  return rows.length;
}

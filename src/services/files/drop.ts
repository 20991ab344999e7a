import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest, conflict } from '../../core/errors.ts';
import { fileKey, isTenantKey } from '../../ports/blobs/blobs.ts';
import { MAX_FILE_BYTES, type FileUpload } from '../../schemas/files.ts';
import { fileCleanupJob } from '../storage/file-cleanup.ts';
import { storeFor } from '../storage/tenant-store.ts';
import { createBatch, fileRow, INGEST_TRIES, queueFiles, type BatchFile } from './batches.ts';
import { runIngestFile } from './ingest-run.ts';
import type { StoredFile } from './file-memories.ts';

/** Presigned file URLs (upload PUTs, and GETs of attached files) live this long. */
export const URL_SECONDS = 15 * 60;

const LIMIT = `${MAX_FILE_BYTES} bytes (10 MB)`;
export const tooLarge = (filename: string) => `${filename} is larger than ${LIMIT}`;

/** A file of a request that was not stored. */
export interface FileFailure {
  /** Its position in the request's `files`. */
  index: number;
  filename: string;
  /** Why, without the filename it is shown beside. */
  detail: string;
}

/** A failure as the per-file results show it. */
export const shownFailure = ({ filename, detail }: FileFailure) => ({ filename, detail });

/**
 * A request none of whose files could be stored: a 422 naming each file (`files.<i>`), in the
 * shape of the service's validation errors. The caller throws it with nothing kept.
 */
export function noFileStored(failures: FileFailure[]): AppError {
  const errors = [...failures].sort((a, b) => a.index - b.index).map((f) => ({ path: `files.${f.index}`, message: `${f.filename}: ${f.detail}` }));
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more: see errors)` : '';
  return new AppError('UNPROCESSABLE_CONTENT', `No file could be stored: ${errors[0]!.message}${more}`, errors);
}

/** A fresh key for each file that is not too large; the others fail alone. Nothing is written yet. */
function planUploads(ctx: AuthedCtx, collection: string, files: FileUpload[]) {
  const planned: Array<StoredFile & { index: number }> = [];
  const failed: FileFailure[] = [];
  for (const [index, f] of files.entries()) {
    if (f.data.length > MAX_FILE_BYTES) failed.push({ index, filename: f.filename, detail: `Larger than ${LIMIT}` });
    else planned.push({ index, key: fileKey(ctx.tenant.id, collection, f.filename), filename: f.filename, content_type: f.content_type, data: f.data });
  }
  return { planned, failed };
}

/** Writes each file that is not too large to the tenant's store under a fresh key; the others fail alone. */
export async function storeUploads(ctx: AuthedCtx, collection: string, files: FileUpload[]) {
  const { planned, failed } = planUploads(ctx, collection, files);
  await putAll(ctx, planned);
  return { stored: planned, failed };
}

const putAll = async (ctx: AuthedCtx, files: StoredFile[]) => {
  const store = await storeFor(ctx.app, ctx.tenant.id);
  for (const f of files) await store.put(f.key, f.data, f.content_type);
};

/**
 * A drop's batch, recorded before a byte is stored (docs/files.md), then its files stored: a drop
 * cut short (its server killed) leaves every stored file in the batch, queued, and the batch's
 * jobs ingest those after ORGMEM_SYNC_DROP_RESUME_SECONDS.
 */
async function recordAndStore(ctx: AuthedCtx, collection: string, files: StoredFile[], source: string): Promise<string> {
  const resumeAt = new Date(Date.now() + ctx.app.config.syncDropResumeSeconds * 1000);
  const batchId = await ctx.app.db.transaction((tx) => createBatch(tx, ctx, collection, files.map(asBatchFile), source, { resumeAt }));
  await putAll(ctx, files);
  return batchId;
}

const asBatchFile = (f: StoredFile): BatchFile => ({ key: f.key, filename: f.filename, content_type: f.content_type, size: f.data.length });

const failedFile = (filename: string, detail: string) => ({ filename, status: 'failed' as const, key: null, memory_ids: [], chunks: 0, preview: '', detail });

/**
 * Sync drop: every file is stored, read and turned into memories before the answer, each on its
 * own, its batch recorded first (recordAndStore). When no file could be stored, the answer is a
 * 422 (noFileStored) and nothing is kept: no file, no memory, no batch.
 */
export async function dropNow(ctx: AuthedCtx, collection: string, files: FileUpload[], source = 'drop') {
  const { planned, failed } = planUploads(ctx, collection, files);
  if (!planned.length) throw noFileStored(failed);
  const batchId = await recordAndStore(ctx, collection, planned, source);
  const results = [];
  const unread: FileFailure[] = [];
  for (const file of planned) {
    // The first try of the file, run here rather than by the worker; settled by another try meanwhile, its row answers.
    const outcome =
      (await runIngestFile(ctx, batchId, file.key, { attempt: 1, maxAttempts: INGEST_TRIES }, file.data)) ?? (await fileRow(ctx, batchId, file.key));
    if (outcome.state === 'done') {
      results.push({
        filename: file.filename,
        status: 'stored' as const,
        key: file.key,
        memory_ids: outcome.memory_ids,
        chunks: outcome.chunks,
        preview: outcome.preview,
      });
    } else {
      unread.push({ index: file.index, filename: file.filename, detail: outcome.error });
      results.push(failedFile(file.filename, outcome.error));
    }
  }
  if (!results.some((r) => r.status === 'stored')) {
    await ctx.app.db.query('delete from ingest_batches where tenant_id = $1 and id = $2', [ctx.tenant.id, batchId]);
    await (await storeFor(ctx.app, ctx.tenant.id)).delete(planned.map((f) => f.key));
    throw noFileStored([...unread, ...failed]);
  }
  for (const f of failed) results.push(failedFile(f.filename, f.detail));
  return {
    batch_id: batchId,
    stored: results.filter((r) => r.status === 'stored').length,
    failed: results.filter((r) => r.status === 'failed').length,
    files: results,
  };
}

/**
 * Async drop: the files are stored now, their batch recorded first (recordAndStore), and read by
 * the worker; the batch tells how it went. A drop none of whose files could be stored (all too
 * large) is a 422, with no batch; a mail's attachments (source `email`) are queued whatever, the
 * mail being stored anyway.
 */
export async function dropLater(ctx: AuthedCtx, collection: string, files: FileUpload[], source = 'drop') {
  const { planned, failed } = planUploads(ctx, collection, files);
  if (!planned.length && source === 'drop') throw noFileStored(failed);
  const batchId = await recordAndStore(ctx, collection, planned, source);
  await ctx.app.db.transaction((tx) => queueFiles(tx, ctx, collection, batchId, planned.map(asBatchFile)));
  return { batch_id: batchId, queued: planned.length, failed: failed.map(shownFailure) };
}

/**
 * Presigned PUT URLs for the client to upload to directly; oversize files are flagged, not signed.
 * Each key is recorded, so that drop/complete takes the keys issued here only, each once. A URL
 * writes once (docs/files.md): the PUT sends `headers`, which ask the store not to replace a file.
 */
export async function presignUploads(ctx: AuthedCtx, collection: string, uploads: Array<{ filename: string; content_type: string; size: number }>) {
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const origin = ctx.origin ?? `http://localhost:${ctx.app.config.port}`;
  const expiresAt = new Date(Date.now() + URL_SECONDS * 1000).toISOString();
  const answers = await Promise.all(
    uploads.map(async (u) => {
      if (u.size > MAX_FILE_BYTES) return { filename: u.filename, error: tooLarge(u.filename) };
      const key = fileKey(ctx.tenant.id, collection, u.filename);
      const url = await store.presign('put', key, { expiresInSeconds: URL_SECONDS, contentType: u.content_type, origin });
      return { filename: u.filename, key, url, headers: { 'content-type': u.content_type, 'if-none-match': '*' }, expires_at: expiresAt };
    }),
  );
  const keys = answers.flatMap((a) => ('key' in a ? [a.key] : []));
  await ctx.app.db.query('insert into presigned_uploads (tenant_id, key, collection) select $1, k, $2 from unnest($3::text[]) k', [
    ctx.tenant.id,
    collection,
    keys,
  ]);
  return { uploads: answers };
}

/**
 * The client has PUT its files. Every key must be one presign issued for this tenant and
 * collection (anything else is a 400 for the whole call: no file of another namespace, and no
 * file a drop stored, is ever read again) and not completed before (a 409 naming its batch: a
 * retried complete never makes a second memory). Files missing from the store or larger than the
 * limit are rejected alone and may be completed once uploaded; the rest are queued as one batch.
 */
export async function completeUploads(ctx: AuthedCtx, collection: string, files: Array<{ key: string; filename: string; mime: string; size: number }>) {
  const foreign = files.find((f) => !isTenantKey(f.key, ctx.tenant.id, collection));
  if (foreign) throw badRequest(`The key ${JSON.stringify(foreign.key)} is not in this collection's upload namespace (use the keys presign answered)`);
  const issued = new Map(
    (
      await ctx.app.db.query<{ key: string; batch_id: string | null }>(
        'select key, batch_id from presigned_uploads where tenant_id = $1 and collection = $2 and key = any($3::text[])',
        [ctx.tenant.id, collection, files.map((f) => f.key)],
      )
    ).map((r) => [r.key, r.batch_id]),
  );
  const unissued = files.find((f) => !issued.has(f.key));
  if (unissued) throw badRequest(`The key ${JSON.stringify(unissued.key)} was not issued by presign for this collection (use the keys presign answered)`);
  const completed = files.find((f) => issued.get(f.key));
  if (completed) throw conflict(`The key ${JSON.stringify(completed.key)} was already completed: its file is in ingest batch ${issued.get(completed.key)}`);
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const queued: BatchFile[] = [];
  const rejected: Array<{ key: string; filename: string; detail: string }> = [];
  for (const f of files) {
    const seen = queued.some((q) => q.key === f.key);
    const head = seen ? null : await store.head(f.key);
    if (seen) rejected.push({ key: f.key, filename: f.filename, detail: 'This key is listed twice' });
    else if (!head) rejected.push({ key: f.key, filename: f.filename, detail: 'Nothing was uploaded at this key' });
    else if (head.size > MAX_FILE_BYTES) {
      rejected.push({ key: f.key, filename: f.filename, detail: tooLarge(f.filename) });
      await store.delete([f.key]);
    } else queued.push({ key: f.key, filename: f.filename, content_type: f.mime || head.contentType, size: head.size });
  }
  const batchId = await ctx.app.db.transaction(async (tx) => {
    const id = await createBatch(tx, ctx, collection, queued, 'drop');
    // Of two completes of one key at once, the second finds it taken here and is refused with nothing kept.
    const taken = await tx.query(
      'update presigned_uploads set batch_id = $3 where tenant_id = $1 and key = any($2::text[]) and batch_id is null returning key',
      [ctx.tenant.id, queued.map((q) => q.key), id],
    );
    if (taken.length < queued.length) throw conflict('A key of this call was completed by another call meanwhile');
    return id;
  });
  return { batch_id: batchId, queued: queued.length, rejected };
}

/** How long a presigned key waits for its complete (its URL lives URL_SECONDS): then it and any file PUT at it go. */
export const PRESIGN_KEPT_HOURS = 24;

/**
 * Drops the keys presign issued that no complete took within PRESIGN_KEPT_HOURS, and queues the
 * removal of whatever was uploaded at them (a file no batch reads): the hourly writes sweep, over
 * `data` (a data database).
 */
export async function dropUnusedPresigns(data: App): Promise<number> {
  return data.db.transaction(async (tx) => {
    const rows = await tx.query<{ tenant_id: string; key: string }>(
      `delete from presigned_uploads where batch_id is null and created_at < now() - make_interval(hours => $1) returning tenant_id, key`,
      [PRESIGN_KEPT_HOURS],
    );
    const byTenant = new Map<string, string[]>();
    for (const r of rows) byTenant.set(r.tenant_id, [...(byTenant.get(r.tenant_id) ?? []), r.key]);
    for (const [tenantId, keys] of byTenant) await data.jobs.enqueue(tx, fileCleanupJob, { tenant_id: tenantId, keys });
    return rows.length;
  });
}

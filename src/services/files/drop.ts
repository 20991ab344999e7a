import type { AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest } from '../../core/errors.ts';
import { fileKey, isTenantKey } from '../../ports/blobs/blobs.ts';
import { MAX_FILE_BYTES, type FileUpload } from '../../schemas/files.ts';
import { storeFor } from '../storage/tenant-store.ts';
import { createBatch, type BatchFile } from './batches.ts';
import { UnreadableFileError } from './unreadable.ts';
import { chunkMemories, preview, readFile, type StoredFile } from './file-memories.ts';

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

/** Writes each file that is not too large to the tenant's store under a fresh key; the others fail alone. */
export async function storeUploads(ctx: AuthedCtx, collection: string, files: FileUpload[]) {
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const stored: Array<StoredFile & { index: number }> = [];
  const failed: FileFailure[] = [];
  for (const [index, f] of files.entries()) {
    if (f.data.length > MAX_FILE_BYTES) {
      failed.push({ index, filename: f.filename, detail: `Larger than ${LIMIT}` });
      continue;
    }
    const key = fileKey(ctx.tenant.id, collection, f.filename);
    await store.put(key, f.data, f.content_type);
    stored.push({ index, key, filename: f.filename, content_type: f.content_type, data: f.data });
  }
  return { stored, failed };
}

const asBatchFile = (f: StoredFile): BatchFile => ({ key: f.key, filename: f.filename, content_type: f.content_type, size: f.data.length });

/**
 * Sync drop: every file is stored, read and turned into memories before the answer, each on its
 * own. When none could be, the answer is a 422 (noFileStored) and nothing is kept: a file that
 * cannot be read leaves the store at once, and no memory was written.
 */
export async function dropNow(ctx: AuthedCtx, collection: string, files: FileUpload[], source = 'drop') {
  const { stored, failed } = await storeUploads(ctx, collection, files);
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const results = [];
  const unread: FileFailure[] = [];
  for (const file of stored) {
    try {
      const { text } = await readFile(ctx, file);
      const { chunks, store } = await chunkMemories(ctx, file, text, source);
      const memories = await ctx.app.db.transaction((tx) => store(tx, collection));
      results.push({
        filename: file.filename,
        status: 'stored' as const,
        key: file.key,
        memory_ids: memories.map((m) => m.id),
        chunks,
        preview: preview(text),
      });
    } catch (err) {
      if (!(err instanceof UnreadableFileError)) throw err;
      // No memory will ever point at it: it leaves the store at once.
      await store.delete([file.key]);
      unread.push({ index: file.index, filename: file.filename, detail: err.message });
      results.push({ filename: file.filename, status: 'failed' as const, key: null, memory_ids: [], chunks: 0, preview: '', detail: err.message });
    }
  }
  if (!results.some((r) => r.status === 'stored')) throw noFileStored([...unread, ...failed]);
  for (const f of failed)
    results.push({ filename: f.filename, status: 'failed' as const, key: null, memory_ids: [], chunks: 0, preview: '', detail: f.detail });
  return { stored: results.filter((r) => r.status === 'stored').length, failed: results.filter((r) => r.status === 'failed').length, files: results };
}

/**
 * Async drop: the files are stored now and read by the worker; the batch tells how it went. A
 * drop none of whose files could be stored (all too large) is a 422, with no batch; a mail's
 * attachments (source `email`) are queued whatever, the mail being stored anyway.
 */
export async function dropLater(ctx: AuthedCtx, collection: string, files: FileUpload[], source = 'drop') {
  const { stored, failed } = await storeUploads(ctx, collection, files);
  if (!stored.length && source === 'drop') throw noFileStored(failed);
  const batchId = await ctx.app.db.transaction((tx) => createBatch(tx, ctx, collection, stored.map(asBatchFile), source));
  return { batch_id: batchId, queued: stored.length, failed: failed.map(shownFailure) };
}

/** Presigned PUT URLs for the client to upload to directly; oversize files are flagged, not signed. */
export async function presignUploads(ctx: AuthedCtx, collection: string, uploads: Array<{ filename: string; content_type: string; size: number }>) {
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const origin = ctx.origin ?? `http://localhost:${ctx.app.config.port}`;
  const expiresAt = new Date(Date.now() + URL_SECONDS * 1000).toISOString();
  return {
    uploads: await Promise.all(
      uploads.map(async (u) => {
        if (u.size > MAX_FILE_BYTES) return { filename: u.filename, error: tooLarge(u.filename) };
        const key = fileKey(ctx.tenant.id, collection, u.filename);
        const url = await store.presign('put', key, { expiresInSeconds: URL_SECONDS, contentType: u.content_type, origin });
        return { filename: u.filename, key, url, expires_at: expiresAt };
      }),
    ),
  };
}

/**
 * The client has PUT its files: each key must be one of this tenant's and collection's (anything
 * else is a 400 for the whole call: no file of another namespace is ever read). Files missing
 * from the store or larger than the limit are rejected alone; the rest are queued as one batch.
 */
export async function completeUploads(ctx: AuthedCtx, collection: string, files: Array<{ key: string; filename: string; mime: string; size: number }>) {
  const foreign = files.find((f) => !isTenantKey(f.key, ctx.tenant.id, collection));
  if (foreign) throw badRequest(`The key ${JSON.stringify(foreign.key)} is not in this collection's upload namespace (use the keys presign answered)`);
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const done = new Set(
    (
      await ctx.app.db.query<{ key: string }>('select key from ingest_files where tenant_id = $1 and key = any($2::text[])', [
        ctx.tenant.id,
        files.map((f) => f.key),
      ])
    ).map((r) => r.key),
  );
  const queued: BatchFile[] = [];
  const rejected: Array<{ key: string; filename: string; detail: string }> = [];
  for (const f of files) {
    const seen = done.has(f.key) || queued.some((q) => q.key === f.key);
    const head = seen ? null : await store.head(f.key);
    if (seen) rejected.push({ key: f.key, filename: f.filename, detail: 'This key was already completed' });
    else if (!head) rejected.push({ key: f.key, filename: f.filename, detail: 'Nothing was uploaded at this key' });
    else if (head.size > MAX_FILE_BYTES) {
      rejected.push({ key: f.key, filename: f.filename, detail: tooLarge(f.filename) });
      await store.delete([f.key]);
    } else queued.push({ key: f.key, filename: f.filename, content_type: f.mime || head.contentType, size: head.size });
  }
  const batchId = await ctx.app.db.transaction((tx) => createBatch(tx, ctx, collection, queued, 'drop'));
  return { batch_id: batchId, queued: queued.length, rejected };
}

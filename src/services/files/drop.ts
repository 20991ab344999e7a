import type { AuthedCtx } from '../../context.ts';
import { badRequest } from '../../errors.ts';
import { fileKey, isTenantKey } from '../../ports/blobs/blobs.ts';
import { MAX_FILE_BYTES, type FileUpload } from '../../schemas/files.ts';
import { storeFor } from '../storage/tenant-store.ts';
import { createBatch, type BatchFile } from './batches.ts';
import { ExtractionError } from './extract.ts';
import { chunkMemories, preview, readFile, type StoredFile } from './file-memories.ts';

/** Presigned upload URLs live this long (decisions.md: 15 minutes for file URLs). */
export const URL_SECONDS = 15 * 60;

export const tooLarge = (filename: string) => `${filename} is larger than ${MAX_FILE_BYTES} bytes (10 MB)`;

export interface FileFailure {
  filename: string;
  detail: string;
}

/** Writes each file that is not too large to the tenant's store under a fresh key; the others fail alone. */
export async function storeUploads(ctx: AuthedCtx, collection: string, files: FileUpload[]) {
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const stored: StoredFile[] = [];
  const failed: FileFailure[] = [];
  for (const f of files) {
    if (f.data.length > MAX_FILE_BYTES) {
      failed.push({ filename: f.filename, detail: tooLarge(f.filename) });
      continue;
    }
    const key = fileKey(ctx.tenant.id, collection, f.filename);
    await store.put(key, f.data, f.content_type);
    stored.push({ key, filename: f.filename, content_type: f.content_type, data: f.data });
  }
  return { stored, failed };
}

const asBatchFile = (f: StoredFile): BatchFile => ({ key: f.key, filename: f.filename, content_type: f.content_type, size: f.data.length });

/** Sync drop: every file is stored, read and turned into memories before the answer, each on its own. */
export async function dropNow(ctx: AuthedCtx, collection: string, files: FileUpload[], source = 'drop') {
  const { stored, failed } = await storeUploads(ctx, collection, files);
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const results = [];
  for (const file of stored) {
    try {
      const { text } = await readFile(ctx, file);
      const { chunks, store } = await chunkMemories(ctx, file, text, source);
      const memories = await ctx.app.db.transaction((tx) => store(tx, collection));
      results.push({ filename: file.filename, status: 'stored' as const, key: file.key, memory_ids: memories.map((m) => m.id), chunks, preview: preview(text) });
    } catch (err) {
      if (!(err instanceof ExtractionError)) throw err;
      // No memory will ever point at it: it leaves the store at once.
      await store.delete([file.key]);
      results.push({ filename: file.filename, status: 'failed' as const, key: null, memory_ids: [], chunks: 0, preview: '', detail: err.message });
    }
  }
  for (const f of failed) results.push({ filename: f.filename, status: 'failed' as const, key: null, memory_ids: [], chunks: 0, preview: '', detail: f.detail });
  return { stored: results.filter((r) => r.status === 'stored').length, failed: results.filter((r) => r.status === 'failed').length, files: results };
}

/** Async drop: the files are stored now and read by the worker; the batch tells how it went. */
export async function dropLater(ctx: AuthedCtx, collection: string, files: FileUpload[], source = 'drop') {
  const { stored, failed } = await storeUploads(ctx, collection, files);
  const batchId = await ctx.app.db.transaction((tx) => createBatch(tx, ctx, collection, stored.map(asBatchFile), source));
  return { batch_id: batchId, queued: stored.length, failed };
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
    (await ctx.app.db.query<{ key: string }>('select key from ingest_files where tenant_id = $1 and key = any($2::text[])', [ctx.tenant.id, files.map((f) => f.key)])).map((r) => r.key),
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

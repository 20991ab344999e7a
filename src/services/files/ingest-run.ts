import type { App, AuthedCtx } from '../../core/context.ts';
import type { JobMeta } from '../../ports/jobs/jobs.ts';
import { LlmUnavailableError } from '../../ports/llm/llm.ts';
import { fileCleanupJob } from '../storage/file-cleanup.ts';
import { storeFor } from '../storage/tenant-store.ts';
import type { FileState } from './batches.ts';
import { UnreadableFileError } from './read-text.ts';
import { chunkMemories, preview, readFile } from './file-memories.ts';

interface Job {
  collection: string;
  source: string;
  filename: string;
  content_type: string;
  state: FileState;
}

/** Moves a file that is not settled yet; a file another try settled meanwhile (done or failed) stays as it is. */
const setFile = (app: App, p: { tenantId: string; batchId: string; key: string }, state: FileState, fields: { attempts?: number; error?: string }) =>
  app.db.query(
    `update ingest_files set state = $4, attempts = coalesce($5, attempts), error = $6, updated_at = now()
      where tenant_id = $1 and batch_id = $2 and key = $3 and state not in ('done', 'failed') returning key`,
    [p.tenantId, p.batchId, p.key, state, fields.attempts ?? null, fields.error ?? null],
  );

/** How one try settled its file; null when the file was settled by another try (or its batch is gone). */
export type FileOutcome = { state: 'done'; memory_ids: string[]; chunks: number; preview: string } | { state: 'failed'; error: string } | null;

/**
 * One try of one file of a batch: download, read, chunk, embed, store. The chunks are inserted
 * in the same transaction that marks the file done, so a worker killed mid-file leaves nothing
 * behind and the retry starts over without duplicates. A file that cannot be read fails at once
 * with its reason; other failures (store, LLM, database) are retried, and fail after the last try.
 * `ctx` is the batch's agent, resolved with its grant by the job runner (`ingestJob.acts`), or the
 * caller of a sync drop, which runs the first try itself and hands over the bytes it has (`data`).
 * Two tries of one file at once (a sync drop and its resume job) store it once: the file is marked
 * done in the transaction that stores its chunks, only if no other try did.
 */
export async function runIngestFile(ctx: AuthedCtx, batchId: string, key: string, { attempt, maxAttempts }: JobMeta, data?: Buffer): Promise<FileOutcome> {
  const { app } = ctx;
  const tenantId = ctx.tenant.id;
  const where = { tenantId, batchId, key };
  const [job] = await app.db.query<Job>(
    `select b.collection, b.source, f.filename, f.content_type, f.state
       from ingest_files f join ingest_batches b on b.tenant_id = f.tenant_id and b.id = f.batch_id
      where f.tenant_id = $1 and f.batch_id = $2 and f.key = $3`,
    [tenantId, batchId, key],
  );
  if (!job || job.state === 'done' || job.state === 'failed') return null;
  if (!(await setFile(app, where, 'processing', { attempts: attempt })).length) return null;
  try {
    const blob = data ? { body: data, contentType: job.content_type } : await (await storeFor(app, tenantId)).get(key);
    if (!blob) throw new UnreadableFileError('Nothing was uploaded at this key');
    const { text } = await readFile(ctx, { filename: job.filename, content_type: job.content_type || blob.contentType, data: blob.body });
    const file = { key, filename: job.filename, content_type: job.content_type };
    const { chunks, store } = await chunkMemories(ctx, file, text, job.source);
    const memoryIds = await app.db.transaction(async (tx) => {
      // First: a try that finds the file settled stores nothing (its transaction waits here for the other's).
      const claimed = await tx.query(
        `update ingest_files set state = 'done', chunks = $4, error = null, updated_at = now()
          where tenant_id = $1 and batch_id = $2 and key = $3 and state not in ('done', 'failed') returning key`,
        [tenantId, batchId, key, chunks],
      );
      if (!claimed.length) return null;
      const ids = (await store(tx, job.collection)).map((m) => m.id);
      await tx.query(`update ingest_files set memory_ids = $4::jsonb where tenant_id = $1 and batch_id = $2 and key = $3`, [tenantId, batchId, key, ids]);
      return ids;
    });
    return memoryIds && { state: 'done', memory_ids: memoryIds, chunks, preview: preview(text) };
  } catch (err) {
    const final = err instanceof UnreadableFileError || attempt >= maxAttempts;
    const moved = await setFile(app, where, final ? 'failed' : 'queued', { error: reasonOf(err) });
    // A failed file has no memory to belong to: it leaves the store (a retry of this job finds the file failed).
    if (final && moved.length) await app.jobs.enqueue(app.db, fileCleanupJob, { tenant_id: tenantId, keys: [key] });
    app.log.warn({ err, batch_id: batchId, key, attempt, final }, 'file ingestion failed');
    // Rethrowing hands the job back to the queue for its next try; a final failure is settled here.
    if (!final) throw err;
    return moved.length ? { state: 'failed', error: reasonOf(err) } : null;
  }
}

/**
 * A file given up without a try that settled it (its last try cut short by a crash, or its agent
 * refused by the grants) fails with the reason and leaves the store, unless it was settled before.
 */
export async function abandonIngestFile(app: App, tenantId: string, batchId: string, key: string, reason: string): Promise<void> {
  await app.db.transaction(async (tx) => {
    const settled = await tx.query(
      `update ingest_files set state = 'failed', error = $4, updated_at = now()
        where tenant_id = $1 and batch_id = $2 and key = $3 and state not in ('done', 'failed') returning key`,
      [tenantId, batchId, key, reason],
    );
    if (settled.length) await app.jobs.enqueue(tx, fileCleanupJob, { tenant_id: tenantId, keys: [key] });
  });
}

/** What the tenant reads in the batch: the file's own problem, the LLM's, or an internal error. */
const reasonOf = (err: unknown) =>
  err instanceof UnreadableFileError
    ? err.message
    : err instanceof LlmUnavailableError
      ? `The LLM endpoint failed: ${err.message}`
      : 'Internal error while ingesting the file';

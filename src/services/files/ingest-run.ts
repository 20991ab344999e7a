import type { App, AuthedCtx } from '../../core/context.ts';
import type { JobMeta } from '../../ports/jobs/jobs.ts';
import { LlmUnavailableError } from '../../ports/llm/llm.ts';
import { fileCleanupJob } from '../storage/file-cleanup.ts';
import { storeFor } from '../storage/tenant-store.ts';
import type { FileState } from './batches.ts';
import { UnreadableFileError } from './unreadable.ts';
import { chunkMemories, readFile } from './file-memories.ts';

interface Job {
  collection: string;
  source: string;
  filename: string;
  content_type: string;
  state: FileState;
}

const setFile = (app: App, p: { tenantId: string; batchId: string; key: string }, state: FileState, fields: { attempts?: number; error?: string }) =>
  app.db.query(
    `update ingest_files set state = $4, attempts = coalesce($5, attempts), error = $6, updated_at = now()
      where tenant_id = $1 and batch_id = $2 and key = $3`,
    [p.tenantId, p.batchId, p.key, state, fields.attempts ?? null, fields.error ?? null],
  );

/**
 * One try of one file of a batch: download, read, chunk, embed, store. The chunks are inserted
 * in the same transaction that marks the file done, so a worker killed mid-file leaves nothing
 * behind and the retry starts over without duplicates. A file that cannot be read fails at once
 * with its reason; other failures (store, LLM, database) are retried, and fail after the last try.
 * `ctx` is the batch's agent, resolved with its grant by the job runner (`ingestJob.acts`).
 */
export async function runIngestFile(ctx: AuthedCtx, batchId: string, key: string, { attempt, maxAttempts }: JobMeta): Promise<void> {
  const { app } = ctx;
  const tenantId = ctx.tenant.id;
  const where = { tenantId, batchId, key };
  const [job] = await app.db.query<Job>(
    `select b.collection, b.source, f.filename, f.content_type, f.state
       from ingest_files f join ingest_batches b on b.tenant_id = f.tenant_id and b.id = f.batch_id
      where f.tenant_id = $1 and f.batch_id = $2 and f.key = $3`,
    [tenantId, batchId, key],
  );
  if (!job || job.state === 'done' || job.state === 'failed') return;
  await setFile(app, where, 'processing', { attempts: attempt });
  try {
    const blob = await (await storeFor(app, tenantId)).get(key);
    if (!blob) throw new UnreadableFileError('Nothing was uploaded at this key');
    const { text } = await readFile(ctx, { filename: job.filename, content_type: job.content_type || blob.contentType, data: blob.body });
    const file = { key, filename: job.filename, content_type: job.content_type };
    const { chunks, store } = await chunkMemories(ctx, file, text, job.source);
    await app.db.transaction(async (tx) => {
      const memories = await store(tx, job.collection);
      await tx.query(
        `update ingest_files set state = 'done', chunks = $4, memory_ids = $5::jsonb, error = null, updated_at = now()
          where tenant_id = $1 and batch_id = $2 and key = $3`,
        [tenantId, batchId, key, chunks, memories.map((m) => m.id)],
      );
    });
  } catch (err) {
    const final = err instanceof UnreadableFileError || attempt >= maxAttempts;
    await setFile(app, where, final ? 'failed' : 'queued', { error: reasonOf(err) });
    // A failed file has no memory to belong to: it leaves the store (a retry of this job finds the file failed).
    if (final) await app.jobs.enqueue(app.db, fileCleanupJob, { tenant_id: tenantId, keys: [key] });
    app.log.warn({ err, batch_id: batchId, key, attempt, final }, 'file ingestion failed');
    // Rethrowing hands the job back to the queue for its next try; a final failure is settled here.
    if (!final) throw err;
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

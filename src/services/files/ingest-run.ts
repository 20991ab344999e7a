import type { App, AuthedCtx } from '../../core/context.ts';
import type { JobMeta } from '../../ports/jobs/jobs.ts';
import { LlmUnavailableError } from '../../ports/llm/llm.ts';
import { fileCleanupJob } from '../storage/file-cleanup.ts';
import { storeFor } from '../storage/tenant-store.ts';
import type { FileState } from './batches.ts';
import { UnreadableFileError } from './unreadable.ts';
import { embedAll, fileMemories, readFile } from './file-memories.ts';
import { deleteMemories } from '../memory/lifecycle.ts';
import { insertMemories } from '../memory/memories.ts';

interface Job {
  collection: string;
  source: string;
  filename: string;
  content_type: string;
  state: FileState;
  memory_ids: string[];
}

/**
 * Chunks embedded and stored per transaction: a large file (a 10 MB text is about 5,000 chunks)
 * is written in steps, each recorded in the file's `memory_ids`, so a retry goes on after the
 * last stored step instead of embedding the file again.
 */
const STORE_CHUNKS = 256;

const setFile = (app: App, p: { tenantId: string; batchId: string; key: string }, state: FileState, fields: { attempts?: number; error?: string }) =>
  app.db.query(
    `update ingest_files set state = $4, attempts = coalesce($5, attempts), error = $6, updated_at = now()
      where tenant_id = $1 and batch_id = $2 and key = $3`,
    [p.tenantId, p.batchId, p.key, state, fields.attempts ?? null, fields.error ?? null],
  );

/**
 * One try of one file of a batch: download, read, chunk, then embed and store the chunks
 * STORE_CHUNKS at a time, each step in one transaction with the file's progress (`memory_ids`).
 * A try cut short (a database error, a killed worker) leaves whole steps behind, and the next try
 * goes on after them without duplicates (the same text gives the same chunks). A file that cannot
 * be read, or is over a reading limit (the runner's memory and time included), fails at once with
 * its reason; other failures (store, LLM, database) are retried, and fail after the last try. A
 * failed file's stored chunks are deleted with it. `ctx` is the batch's agent, resolved with its
 * grant by the job runner (`ingestJob.acts`).
 */
export async function runIngestFile(ctx: AuthedCtx, batchId: string, key: string, { attempt, maxAttempts }: JobMeta): Promise<void> {
  const { app } = ctx;
  const tenantId = ctx.tenant.id;
  const where = { tenantId, batchId, key };
  const [job] = await app.db.query<Job>(
    `select b.collection, b.source, f.filename, f.content_type, f.state, f.memory_ids
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
    const items = fileMemories({ key, filename: job.filename, content_type: job.content_type }, text, job.source);
    for (let from = job.memory_ids.length; from < items.length; from += STORE_CHUNKS) {
      const step = items.slice(from, from + STORE_CHUNKS);
      const embeddings = await embedAll(
        ctx,
        step.map((m) => m.text),
      );
      await app.db.transaction(async (tx) => {
        const memories = await insertMemories(tx, ctx, job.collection, step, embeddings);
        await tx.query(
          `update ingest_files set chunks = $4, memory_ids = memory_ids || $5::jsonb, updated_at = now()
            where tenant_id = $1 and batch_id = $2 and key = $3`,
          [tenantId, batchId, key, items.length, memories.map((m) => m.id)],
        );
      });
    }
    await app.db.query(
      `update ingest_files set state = 'done', chunks = $4, error = null, updated_at = now() where tenant_id = $1 and batch_id = $2 and key = $3`,
      [tenantId, batchId, key, items.length],
    );
  } catch (err) {
    const final = err instanceof UnreadableFileError || attempt >= maxAttempts;
    if (final) await dropStoredChunks(ctx, batchId, key, job.collection);
    await setFile(app, where, final ? 'failed' : 'queued', { error: reasonOf(err) });
    // A failed file has no memory to belong to: it leaves the store (a retry of this job finds the file failed).
    if (final) await app.jobs.enqueue(app.db, fileCleanupJob, { tenant_id: tenantId, keys: [key] });
    app.log.warn({ err, batch_id: batchId, key, attempt, final }, 'file ingestion failed');
    // Rethrowing hands the job back to the queue for its next try; a final failure is settled here.
    if (!final) throw err;
  }
}

/** The chunks a failed file had stored by then go with it; done again, it deletes nothing twice. */
async function dropStoredChunks(ctx: AuthedCtx, batchId: string, key: string, collection: string): Promise<void> {
  const where = [ctx.tenant.id, batchId, key];
  const [row] = await ctx.app.db.query<{ memory_ids: string[] }>(
    'select memory_ids from ingest_files where tenant_id = $1 and batch_id = $2 and key = $3',
    where,
  );
  if (!row?.memory_ids.length) return;
  await deleteMemories(ctx, collection, row.memory_ids);
  await ctx.app.db.query(`update ingest_files set memory_ids = '[]'::jsonb, chunks = 0 where tenant_id = $1 and batch_id = $2 and key = $3`, where);
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

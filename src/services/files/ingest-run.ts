import type { App, AuthedCtx } from '../../core/context.ts';
import { endStep } from '../../ports/db/db.ts';
import type { JobMeta } from '../../ports/jobs/jobs.ts';
import { LlmUnavailableError } from '../../ports/llm/llm.ts';
import { fileCleanupJob } from '../storage/file-cleanup.ts';
import { storeFor } from '../storage/tenant-store.ts';
import type { FileState } from './batches.ts';
import { UnreadableFileError } from './unreadable.ts';
import { embedAll, preview, readFile } from './file-memories.ts';
import { chunkFile, prepareStep } from './parse-runner.ts';
import { actFor, type Acting } from '../access/grants.ts';
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
 * last stored step instead of embedding the file again. On the embedded database a transaction
 * holds the one connection every other request waits for, so its steps are small and paced
 * (`endStep`): other tenants' requests go between them.
 */
const STORE_CHUNKS = { postgres: 256, pglite: 32 };

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
 * One try of one file of a batch: download, read, chunk, then embed and store the chunks
 * STORE_CHUNKS at a time, each step in one transaction with the file's progress (`memory_ids`).
 * A try cut short (a database error, a killed worker) leaves whole steps behind, and the next try
 * goes on after them without duplicates (the same text gives the same chunks). Two tries of one
 * file at once (a sync drop and its resume job) store it once: a step is stored only while the
 * file's progress is where this try left it (its row locked), and the file is marked done only if
 * no other try settled it. A file that cannot be read, or is over a reading limit (the runner's
 * memory and time included), fails at once with its reason; other failures (store, LLM, database)
 * are retried, and fail after the last try, its stored chunks deleted with it. `ctx` is the
 * batch's agent, resolved with its grant by the job runner (`ingestJob.acts`), or the caller of a
 * sync drop, which runs the first try itself and hands over the bytes it has (`data`).
 */
export async function runIngestFile(ctx: AuthedCtx, batchId: string, key: string, { attempt, maxAttempts }: JobMeta, data?: Buffer): Promise<FileOutcome> {
  const { app } = ctx;
  const tenantId = ctx.tenant.id;
  const where = { tenantId, batchId, key };
  const [job] = await app.db.query<Job>(
    `select b.collection, b.source, f.filename, f.content_type, f.state, f.memory_ids
       from ingest_files f join ingest_batches b on b.tenant_id = f.tenant_id and b.id = f.batch_id
      where f.tenant_id = $1 and f.batch_id = $2 and f.key = $3`,
    [tenantId, batchId, key],
  );
  if (!job || job.state === 'done' || job.state === 'failed') return null;
  if (!(await setFile(app, where, 'processing', { attempts: attempt })).length) return null;
  try {
    const blob = data ? { body: data, contentType: job.content_type } : await (await storeFor(app, tenantId)).get(key);
    if (!blob) throw new UnreadableFileError('Nothing was uploaded at this key');
    const read = await readFile(ctx, { filename: job.filename, content_type: job.content_type || blob.contentType, data: blob.body });
    // The chunking, the steering detector and the hash embedder are CPU only: the runner does them
    // off the event loop, which every tenant's requests share (parse-runner.ts).
    const file = { key, filename: job.filename, content_type: job.content_type };
    const items = await chunkFile({ file, read: { text: read.text, written: read.written, parts: read.parts }, source: job.source }, app.config.parse);
    const perStep = STORE_CHUNKS[app.db.kind];
    for (let from = job.memory_ids.length; from < items.length; from += perStep) {
      const started = performance.now();
      const step = items.slice(from, from + perStep);
      const texts = step.map((m) => m.text);
      const prepared = await prepareStep({ texts, hashed: app.embedder.hashed }, app.config.parse);
      const embeddings = prepared.embeddings ?? (await embedAll(ctx, texts));
      const stored = await app.db.transaction(async (tx) => {
        const [progress] = await tx.query<{ stored: number }>(
          `select jsonb_array_length(memory_ids) as stored from ingest_files
            where tenant_id = $1 and batch_id = $2 and key = $3 and state not in ('done', 'failed') for update`,
          [tenantId, batchId, key],
        );
        // Another try settled the file or stored this step first: it goes on, this one stops.
        if (progress?.stored !== from) return false;
        const memories = await insertMemories(tx, ctx, job.collection, step, embeddings, { trust: 'document', steering: prepared.steering });
        await tx.query(
          `update ingest_files set chunks = $4, memory_ids = memory_ids || $5::jsonb, updated_at = now()
            where tenant_id = $1 and batch_id = $2 and key = $3`,
          [tenantId, batchId, key, items.length, memories.map((m) => m.id)],
        );
        return true;
      });
      if (!stored) return null;
      if (from + perStep < items.length) await endStep(app.db, started);
    }
    const [done] = await app.db.query<{ memory_ids: string[] }>(
      `update ingest_files set state = 'done', chunks = $4, error = null, updated_at = now()
        where tenant_id = $1 and batch_id = $2 and key = $3 and state not in ('done', 'failed') returning memory_ids`,
      [tenantId, batchId, key, items.length],
    );
    return done ? { state: 'done', memory_ids: done.memory_ids, chunks: items.length, preview: preview(read.text) } : null;
  } catch (err) {
    const final = err instanceof UnreadableFileError || attempt >= maxAttempts;
    app.log.warn({ err, batch_id: batchId, key, attempt, final }, 'file ingestion failed');
    // Rethrowing hands the job back to the queue for its next try; a final failure is settled here.
    if (!final) {
      await setFile(app, where, 'queued', { error: reasonOf(err) });
      throw err;
    }
    return (await failFile(ctx, batchId, key, job.collection, reasonOf(err))) ? { state: 'failed', error: reasonOf(err) } : null;
  }
}

/**
 * Fails a file that no other try settled, with the chunks it had stored by then; it has no
 * memory to belong to, so it leaves the file store (a retry of this job finds the file failed).
 */
async function failFile(ctx: AuthedCtx, batchId: string, key: string, collection: string, reason: string): Promise<boolean> {
  const { app } = ctx;
  const [failed] = await app.db.query<{ memory_ids: string[] }>(
    `with old as (
       select memory_ids from ingest_files
        where tenant_id = $1 and batch_id = $2 and key = $3 and state not in ('done', 'failed') for update)
     update ingest_files f set state = 'failed', error = $4, memory_ids = '[]'::jsonb, chunks = 0, updated_at = now()
       from old where f.tenant_id = $1 and f.batch_id = $2 and f.key = $3
     returning old.memory_ids`,
    [ctx.tenant.id, batchId, key, reason],
  );
  if (!failed) return false;
  if (failed.memory_ids.length) await deleteMemories(ctx, collection, failed.memory_ids);
  await app.jobs.enqueue(app.db, fileCleanupJob, { tenant_id: ctx.tenant.id, keys: [key] });
  return true;
}

/** Who deletes the chunks of a file given up without a try: the files service of its tenant, in the batch's collection. */
const giveUp: Acting<{ tenant_id: string; collection: string }> = {
  subject: async (_app, target) => ({ actor: { service: 'files' }, collection: target.collection }),
  grant: { field: 'collection', permission: 'write' },
};

/**
 * A file given up without a try that settled it (its last try cut short by a crash, or its agent
 * refused by the grants) fails with the reason and leaves the store, unless it was settled before.
 * The chunks its cut-short tries stored have no file to belong to: they are deleted first, so a
 * crash here leaves them listed on the file for the next attempt to delete.
 */
export async function abandonIngestFile(app: App, tenantId: string, batchId: string, key: string, reason: string): Promise<void> {
  const [file] = await app.db.query<{ collection: string; memory_ids: string[] }>(
    `select b.collection, f.memory_ids
       from ingest_files f join ingest_batches b on b.tenant_id = f.tenant_id and b.id = f.batch_id
      where f.tenant_id = $1 and f.batch_id = $2 and f.key = $3 and f.state not in ('done', 'failed')`,
    [tenantId, batchId, key],
  );
  if (!file) return;
  if (file.memory_ids.length) {
    const acted = await actFor(app, giveUp, { tenant_id: tenantId, collection: file.collection }, `abandon:${batchId}:${key}`);
    if (acted && 'ctx' in acted) await deleteMemories(acted.ctx, file.collection, file.memory_ids);
  }
  await app.db.transaction(async (tx) => {
    const settled = await tx.query(
      `update ingest_files set state = 'failed', error = $4, memory_ids = '[]'::jsonb, chunks = 0, updated_at = now()
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

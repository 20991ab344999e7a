import { z } from 'zod';
import type { AuthedCtx } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import { actingJob } from '../access/grants.ts';
import { ensureCollection } from '../memory/collections.ts';

/**
 * One stored file of a batch, turned into memories by the worker as the batch's agent (the key
 * that dropped it, or mail's service identity), writing the batch's collection. Tries: 3, backing off.
 */
export const INGEST_TRIES = 3;
export const ingestJob = actingJob(
  defineJob('ingest_file', z.object({ tenant_id: z.uuid(), batch_id: z.uuid(), key: z.string() }), { maxAttempts: INGEST_TRIES }),
  {
    subject: async (app, { tenant_id, batch_id }) => {
      const [batch] = await app.db.query<{ collection: string; agent_id: string | null; agent_label: string }>(
        'select collection, agent_id, agent_label from ingest_batches where tenant_id = $1 and id = $2',
        [tenant_id, batch_id],
      );
      return batch && { actor: batch.agent_id ? { agent_id: batch.agent_id } : { service: batch.agent_label }, collection: batch.collection };
    },
    grant: { field: 'collection', permission: 'write' },
  },
);

export type FileState = 'queued' | 'processing' | 'done' | 'failed';

export interface BatchFile {
  key: string;
  filename: string;
  content_type: string;
  size: number;
}

/**
 * A batch of stored files and one ingest job per file, in the caller's transaction: the jobs
 * exist exactly when the batch does. The worker writes the memories as `ctx.agent` (mail has an
 * agent without a key: an empty id). A batch recorded before its files are stored (a drop,
 * docs/files.md) gets jobs that wait until `resumeAt`, to ingest what a drop killed mid-way left;
 * the caller then queues the files it stored for now (`queueFiles`) or runs their first try itself.
 */
export async function createBatch(
  q: Queryable,
  ctx: AuthedCtx,
  collection: string,
  files: BatchFile[],
  source: string,
  { resumeAt }: { resumeAt?: Date } = {},
): Promise<string> {
  const batchId = newId();
  await q.query(`insert into ingest_batches (tenant_id, id, collection, agent_id, agent_label, source) values ($1, $2, $3, nullif($4, '')::uuid, $5, $6)`, [
    ctx.tenant.id,
    batchId,
    collection,
    ctx.agent.id,
    ctx.agent.label,
    source,
  ]);
  for (const f of files) {
    await q.query(`insert into ingest_files (tenant_id, batch_id, key, filename, content_type, size) values ($1, $2, $3, $4, $5, $6)`, [
      ctx.tenant.id,
      batchId,
      f.key,
      f.filename,
      f.content_type,
      f.size,
    ]);
    if (resumeAt)
      await ctx.app.jobs.enqueue(q, ingestJob, { tenant_id: ctx.tenant.id, batch_id: batchId, key: f.key }, { runAt: resumeAt, key: jobKey(batchId, f.key) });
  }
  if (!resumeAt) await queueFiles(q, ctx, collection, batchId, files);
  return batchId;
}

/** One waiting job per file of a batch: its resume job (above) and its job for now are the same job. */
const jobKey = (batchId: string, key: string) => `ingest_file:${batchId}:${key}`;

/**
 * The batch's files for the worker now, and its collection made: a file's resume job (above) is
 * moved to now rather than joined by a second job that would find the file settled.
 */
export async function queueFiles(q: Queryable, ctx: AuthedCtx, collection: string, batchId: string, files: BatchFile[]): Promise<void> {
  await ensureCollection(q, ctx, collection);
  for (const f of files) {
    await ctx.app.jobs.enqueue(q, ingestJob, { tenant_id: ctx.tenant.id, batch_id: batchId, key: f.key }, { key: jobKey(batchId, f.key), moveRunAt: true });
  }
}

interface FileRow {
  key: string;
  filename: string;
  state: FileState;
  chunks: number;
  memory_ids: string[];
  error: string | null;
}

/**
 * The collection of a batch of the tenant (404 otherwise): its files' memories are the
 * collection's content, so the batch is governed by the collection's grants.
 */
export async function collectionOfBatch(ctx: AuthedCtx, input: { batch_id: string }): Promise<string> {
  const [batch] = isUuid(input.batch_id)
    ? await ctx.app.db.query<{ collection: string }>('select collection from ingest_batches where tenant_id = $1 and id = $2', [ctx.tenant.id, input.batch_id])
    : [];
  if (!batch) throw notFound(`Ingest batch ${input.batch_id} not found`);
  return batch.collection;
}

export async function getBatch(ctx: AuthedCtx, batchId: string) {
  const [batch] = isUuid(batchId)
    ? await ctx.app.db.query<{ id: string; collection: string; created_at: Date }>(
        'select id, collection, created_at from ingest_batches where tenant_id = $1 and id = $2',
        [ctx.tenant.id, batchId],
      )
    : [];
  if (!batch) throw notFound(`Ingest batch ${batchId} not found`);
  const files = await ctx.app.db.query<FileRow>(
    `select key, filename, state, chunks, memory_ids, error from ingest_files where tenant_id = $1 and batch_id = $2 order by filename, key`,
    [ctx.tenant.id, batchId],
  );
  const count = (...states: FileState[]) => files.filter((f) => states.includes(f.state)).length;
  return {
    batch_id: batch.id,
    collection: batch.collection,
    total: files.length,
    done: count('done'),
    failed: count('failed'),
    pending: count('queued', 'processing'),
    complete: count('queued', 'processing') === 0,
    files,
    created_at: iso(batch.created_at)!,
  };
}

/** How a file of a batch was settled, as a try that found it settled reports it. */
export async function fileRow(ctx: AuthedCtx, batchId: string, key: string) {
  const [row] = await ctx.app.db.query<FileRow>(
    `select key, filename, state, chunks, memory_ids, error from ingest_files where tenant_id = $1 and batch_id = $2 and key = $3`,
    [ctx.tenant.id, batchId, key],
  );
  return row?.state === 'done'
    ? { state: 'done' as const, memory_ids: row.memory_ids, chunks: row.chunks, preview: '' }
    : { state: 'failed' as const, error: row?.error ?? 'The file was settled by another try' };
}

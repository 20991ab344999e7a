import { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { iso, isUuid } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import type { FactOutcome } from '../../schemas/graph.ts';
import { actingJob } from '../access/grants.ts';

/**
 * The background half of remember, run as the agent that called remember and writing the job's
 * collection. Its identifier predates the job definitions and is kept: queued jobs store it, so a
 * new name would strand the jobs queued before an upgrade.
 */
export const extractionJob = actingJob(defineJob('extract_facts', z.object({ tenant_id: z.uuid(), job_id: z.uuid() }), { maxAttempts: 3, lane: 'llm' }), {
  subject: async (app, { tenant_id, job_id }) => {
    const [job] = await app.db.query<Pick<JobRow, 'collection' | 'agent_id'>>(
      'select collection, agent_id from extraction_jobs where tenant_id = $1 and id = $2',
      [tenant_id, job_id],
    );
    return job && { actor: { agent_id: job.agent_id }, collection: job.collection };
  },
  grant: { field: 'collection', permission: 'write' },
});

type JobState = 'queued' | 'processing' | 'done' | 'failed';

export interface JobRow {
  id: string;
  collection: string;
  memory_id: string;
  agent_id: string;
  state: JobState;
  attempts: number;
  facts: FactOutcome[];
  skipped: 'spend_cap' | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function createJob(q: Queryable, ctx: AuthedCtx, job: { id: string; collection: string; memoryId: string }) {
  await q.query('insert into extraction_jobs (tenant_id, id, collection, memory_id, agent_id) values ($1, $2, $3, $4, $5)', [
    ctx.tenant.id,
    job.id,
    job.collection,
    job.memoryId,
    ctx.agent.id,
  ]);
}

/** Written in the same transaction as the facts, so a job is done exactly when its facts exist. */
export async function finishJob(q: Queryable, tenantId: string, jobId: string, facts: FactOutcome[], skipped: 'spend_cap' | null) {
  await q.query(
    `update extraction_jobs set state = 'done', facts = $3::jsonb, skipped = $4, error = null, updated_at = now()
      where tenant_id = $1 and id = $2`,
    [tenantId, jobId, facts, skipped],
  );
}

export const setState = (app: App, tenantId: string, jobId: string, state: JobState, fields: { attempts?: number; error?: string }) =>
  app.db.query(
    `update extraction_jobs set state = $3, attempts = coalesce($4, attempts), error = coalesce($5, error), updated_at = now()
      where tenant_id = $1 and id = $2`,
    [tenantId, jobId, state, fields.attempts ?? null, fields.error ?? null],
  );

const findJob = async (ctx: AuthedCtx, jobId: string) => {
  const [row] = isUuid(jobId) ? await ctx.app.db.query<JobRow>('select * from extraction_jobs where tenant_id = $1 and id = $2', [ctx.tenant.id, jobId]) : [];
  if (!row) throw notFound(`Extraction job ${jobId} not found`);
  return row;
};

/**
 * The collection of a job of the tenant (404 otherwise): its facts are the collection's content,
 * so the job is governed by the collection's grants.
 */
export const collectionOfJob = async (ctx: AuthedCtx, input: { job_id: string }) => (await findJob(ctx, input.job_id)).collection;

export async function getJob(ctx: AuthedCtx, jobId: string) {
  const row = await findJob(ctx, jobId);
  return {
    job_id: row.id,
    collection: row.collection,
    memory_id: row.memory_id,
    state: row.state,
    facts: row.facts,
    complete: row.state === 'done' || row.state === 'failed',
    skipped: row.skipped,
    error: row.error,
    attempts: row.attempts,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

/**
 * Puts a failed job back in the queue with its tries reset: the row and the queue entry change in
 * one transaction, and only a job still failed is taken, so two retries enqueue it once.
 */
export async function retryJob(ctx: AuthedCtx, jobId: string) {
  const job = await getJob(ctx, jobId);
  const [retried] = await ctx.app.db.transaction(async (tx) => {
    const rows = await tx.query<{ updated_at: Date }>(
      `update extraction_jobs set state = 'queued', attempts = 0, error = null, updated_at = now()
        where tenant_id = $1 and id = $2 and state = 'failed' returning updated_at`,
      [ctx.tenant.id, job.job_id],
    );
    if (rows.length) await ctx.app.jobs.enqueue(tx, extractionJob, { tenant_id: ctx.tenant.id, job_id: job.job_id });
    return rows;
  });
  if (!retried) throw conflict(`Extraction job ${jobId} is ${job.state}; only a failed job can be retried`);
  // The job as the retry left it: a worker may already be running it by the time it is read again.
  return { ...job, state: 'queued' as const, attempts: 0, error: null, complete: false, updated_at: iso(retried.updated_at)! };
}

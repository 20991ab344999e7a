import type { App, AuthedCtx } from '../../core/context.ts';
import type { JobMeta } from '../../ports/jobs/jobs.ts';
import { LlmUnavailableError } from '../../ports/llm/llm.ts';
import { LlmOutputError } from '../llm/tenant-llm.ts';
import { setState, type JobRow } from './extraction-jobs.ts';
import { extractAndStore, type RawMemory } from './remember.ts';

/** A reason safe to show the tenant: LLM failures say what happened, anything else stays internal. */
const reasonOf = (err: unknown) =>
  err instanceof LlmUnavailableError
    ? `The LLM endpoint failed: ${err.message}`
    : err instanceof LlmOutputError
      ? err.message
      : 'Internal error during extraction';

/**
 * One try of a remember extraction job: queued -> processing -> done, or back to queued (with
 * the error) while tries remain, and failed after the last one. The raw memory is never touched
 * by a failure. `ctx` is the agent that called remember, resolved with its grant by the job
 * runner (`extractionJob.acts`).
 */
export async function runExtraction(ctx: AuthedCtx, jobId: string, { attempt, maxAttempts }: JobMeta): Promise<void> {
  const { app } = ctx;
  const tenantId = ctx.tenant.id;
  const [job] = await app.db.query<JobRow>('select * from extraction_jobs where tenant_id = $1 and id = $2', [tenantId, jobId]);
  if (!job || job.state === 'done' || job.state === 'failed') return;
  await setState(app, tenantId, jobId, 'processing', { attempts: attempt });
  const [raw] = await app.db.query<RawMemory>(
    'select id, text, importance, container_tag, observed_at, trust, quarantine from memories where tenant_id = $1 and id = $2',
    [tenantId, job.memory_id],
  );
  if (!raw) {
    await setState(app, tenantId, jobId, 'failed', { error: 'The memory was deleted before its facts were extracted' });
    return;
  }
  try {
    await extractAndStore(ctx, job.collection, raw, jobId);
  } catch (err) {
    const final = attempt >= maxAttempts;
    await setState(app, tenantId, jobId, final ? 'failed' : 'queued', { error: reasonOf(err) });
    app.log.warn({ err, job_id: jobId, attempt, final }, 'fact extraction failed');
    // Rethrowing hands the job back to the queue for its next try; after the last one it is settled here.
    if (!final) throw err;
  }
}

/** A job given up without a try that settled it (its last try cut short by a crash, or its agent refused by the grants) fails with the reason, unless it was settled before. */
export async function abandonExtraction(app: App, tenantId: string, jobId: string, reason: string): Promise<void> {
  await app.db.query(
    `update extraction_jobs set state = 'failed', error = $3, updated_at = now()
      where tenant_id = $1 and id = $2 and state not in ('done', 'failed')`,
    [tenantId, jobId, reason],
  );
}

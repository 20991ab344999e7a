import { z } from 'zod';
import type { App, AuthedCtx } from '../src/context.ts';
import type { TaskDef } from '../src/ports/jobs/jobs.ts';
import { LlmUnavailableError } from '../src/ports/llm/llm.ts';
import { setState, type JobRow } from '../src/services/graph/extraction-jobs.ts';
import { LlmOutputError } from '../src/services/llm/tenant-llm.ts';
import { extractAndStore } from '../src/services/graph/remember.ts';
import { tenantView, type TenantRow } from '../src/services/access/tenants.ts';

/** The job runs as the agent that called remember, so its facts carry that agent in created_by. */
async function actorOf(app: App, tenantId: string, agentId: string, jobId: string): Promise<AuthedCtx | null> {
  const [row] = await app.db.query<TenantRow & { key_label: string; key_read_only: boolean }>(
    `select t.*, k.label as key_label, k.read_only as key_read_only
       from tenants t join api_keys k on k.tenant_id = t.id and k.id = $2 where t.id = $1`,
    [tenantId, agentId],
  );
  if (!row) return null;
  return {
    app,
    requestId: `job:${jobId}`,
    responseHeaders: {},
    tenant: tenantView(row, app.config.tiers),
    agent: { id: agentId, label: row.key_label, read_only: row.key_read_only },
  };
}

/** A reason safe to show the tenant: LLM failures say what happened, anything else stays internal. */
const reasonOf = (err: unknown) =>
  err instanceof LlmUnavailableError
    ? `The LLM endpoint failed: ${err.message}`
    : err instanceof LlmOutputError
      ? err.message
      : 'Internal error during extraction';

/**
 * queued -> processing -> done, or back to queued (with the error) while tries remain, and
 * failed after the last one. The raw memory is never touched by a failure.
 */
const payload = z.object({ tenant_id: z.uuid(), job_id: z.uuid() });

export const extractFactsTask: TaskDef<typeof payload> = {
  name: 'extract_facts',
  payload,
  async run(app, { tenant_id, job_id }, { attempt, maxAttempts }) {
    const [job] = await app.db.query<JobRow>('select * from extraction_jobs where tenant_id = $1 and id = $2', [tenant_id, job_id]);
    if (!job || job.state === 'done' || job.state === 'failed') return;
    await setState(app, tenant_id, job_id, 'processing', { attempts: attempt });
    const [raw] = await app.db.query<{ id: string; text: string; importance: number }>(
      'select id, text, importance from memories where tenant_id = $1 and id = $2',
      [tenant_id, job.memory_id],
    );
    const ctx = await actorOf(app, tenant_id, job.agent_id, job_id);
    if (!raw || !ctx) {
      await setState(app, tenant_id, job_id, 'failed', { error: 'The memory was deleted before its facts were extracted' });
      return;
    }
    try {
      await extractAndStore(ctx, job.collection, raw, job_id);
    } catch (err) {
      const final = attempt >= maxAttempts;
      await setState(app, tenant_id, job_id, final ? 'failed' : 'queued', { error: reasonOf(err) });
      app.log.warn({ err, job_id, attempt, final }, 'fact extraction failed');
      // Rethrowing hands the job back to the queue for its next try; after the last one it is settled here.
      if (!final) throw err;
    }
  },
};

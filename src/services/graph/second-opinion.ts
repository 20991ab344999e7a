import type { App } from '../../core/context.ts';
import type { JobMeta } from '../../ports/jobs/jobs.ts';
import type { TrustClass } from '../../schemas/trust.ts';
import { checkSteering } from '../llm/calls.ts';
import { resolveLlm } from '../llm/tenant-llm.ts';
import { holdAfterWrite } from '../memory/quarantine.ts';
import { trustPolicyOf } from '../trust/policy.ts';

/** The most of a memory's text the LLM reads: a steering attempt says itself early, and a call stays cheap. */
const MAX_TEXT = 4000;

/**
 * The tenant LLM's second opinion on memories the offline detector found suspect (docs/trust.md,
 * "Second opinion"): each one it judges an attempt to instruct an agent is held, or flagged where
 * the tenant flags its class. Without an LLM (or past the spend cap) nothing is asked. A call that
 * fails is the job's failure, tried again; after the last try the memories it could not judge are
 * held with that reason, for an admin to decide, rather than served unjudged.
 */
export async function secondOpinion(app: App, tenantId: string, memoryIds: string[], meta: JobMeta): Promise<void> {
  const { llm } = await resolveLlm(app, tenantId);
  if (!llm) return;
  const rows = await app.db.query<{ id: string; text: string; trust: TrustClass }>(
    'select id, text, trust from memories where tenant_id = $1 and id = any($2::uuid[]) and quarantine is null and not held',
    [tenantId, memoryIds],
  );
  const policy = await trustPolicyOf(app, tenantId);
  const verdicts: Array<{ id: string; reasons: string[]; held: boolean }> = [];
  const last = meta.attempt >= meta.maxAttempts;
  for (const row of rows) {
    if (policy[row.trust] === 'off') continue;
    const held = policy[row.trust] === 'quarantine';
    try {
      const reply = await llm.call(checkSteering, JSON.stringify({ memory: row.text.slice(0, MAX_TEXT) }));
      if (reply.steering)
        verdicts.push({ id: row.id, reasons: [`the tenant's LLM judged it an attempt to instruct an agent: ${reply.reason.slice(0, 300)}`], held });
    } catch (err) {
      if (!last) {
        await holdAfterWrite({ app, tenant: { id: tenantId } }, verdicts);
        throw err;
      }
      verdicts.push({
        id: row.id,
        reasons: [`the offline screen found it suspect and the tenant's LLM could not judge it: ${String(err).slice(0, 300)}`],
        held: true,
      });
    }
  }
  await holdAfterWrite({ app, tenant: { id: tenantId } }, verdicts);
}

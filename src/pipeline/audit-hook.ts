import type { AuthedCtx } from '../core/context.ts';
import type { AnyProcedure } from './procedure.ts';
import type { Queryable } from '../ports/db/db.ts';
import { appendAudit } from '../services/events/audit.ts';

// Input fields that may hold content or secrets are never copied into the log.
const SENSITIVE = /text|content|query|secret|password|token|credential|api_key|url/i;
const MAX_STRING = 200;

/** The scalar inputs of a call (strings cut short), and array sizes; never content or secrets. */
function smallDetail(input: Record<string, unknown>, skip: string[], output: unknown): Record<string, unknown> {
  const detail: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (skip.includes(k) || SENSITIVE.test(k)) continue;
    if (Array.isArray(v)) detail[`${k}_count`] = v.length;
    else if (typeof v === 'string') detail[k] = v.length > MAX_STRING ? `${v.slice(0, MAX_STRING)}…` : v;
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null) detail[k] = v;
  }
  const id = (output as { id?: unknown } | null)?.id;
  if (typeof id === 'string') detail.id = id;
  return detail;
}

/**
 * Records a successful write or access/account change made through `invoke`, in `q`: the
 * transaction of the change itself (see `commits` in procedure.ts), so that one is never
 * committed without the other. The action is the procedure, the target its REST path with the
 * parameters filled in; `output` (undefined when recorded before the call's end) adds its id.
 */
export async function recordAudit(q: Queryable, ctx: AuthedCtx, proc: AnyProcedure, input: Record<string, unknown>, output: unknown) {
  const params: string[] = [];
  const target = proc.rest.path
    .replace(/\{(\w+)\}/g, (_: string, name: string) => {
      params.push(name);
      return encodeURIComponent(String(input[name] ?? ''));
    })
    .replace(/^\/v1\/memory\//, '');
  await appendAudit(q, ctx.tenant.id, ctx.agent, { action: proc.name, target, detail: smallDetail(input, params, output) });
}

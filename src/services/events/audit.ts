import type { Agent, AuthedCtx } from '../../context.ts';
import { iso, newId } from '../../ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { AnyProcedure } from '../../procedure.ts';

export interface AuditEntry {
  action: string;
  target: string;
  detail?: Record<string, unknown>;
}

/**
 * Appends one entry to a tenant's audit log (append-only: a trigger refuses updates and
 * deletes). A tenant that no longer exists (just deleted its account) gets no entry.
 */
export async function appendAudit(q: Queryable, tenantId: string, actor: Pick<Agent, 'id' | 'label'> | null, entry: AuditEntry) {
  await q.query(
    `insert into audit_log (tenant_id, id, actor_id, actor_label, action, target, detail)
     select $1, $2, $3, $4, $5, $6, $7::jsonb where exists (select 1 from tenants where id = $1)`,
    [tenantId, newId(), actor?.id ?? null, actor?.label ?? null, entry.action, entry.target, entry.detail ?? {}],
  );
}

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
 * Records a successful write or access/account change made through `invoke`: the action is
 * the procedure, the target its REST path with the parameters filled in. A failure to record
 * is logged, never turned into a failed request whose write already committed.
 */
export async function recordAudit(ctx: AuthedCtx, proc: AnyProcedure, input: Record<string, unknown>, output: unknown) {
  const params: string[] = [];
  const target = proc.rest.path
    .replace(/\{(\w+)\}/g, (_: string, name: string) => {
      params.push(name);
      return encodeURIComponent(String(input[name] ?? ''));
    })
    .replace(/^\/v1\/memory\//, '');
  try {
    await appendAudit(ctx.app.db, ctx.tenant.id, ctx.agent, { action: proc.name, target, detail: smallDetail(input, params, output) });
  } catch (err) {
    ctx.app.log.error({ err, procedure: proc.name, requestId: ctx.requestId }, 'audit log write failed');
  }
}

interface AuditRow {
  id: string;
  at: Date;
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target: string;
  detail: Record<string, unknown>;
}

/** The tenant's audit log, newest first. */
export async function listAudit(q: Queryable, tenantId: string, days: number, limit: number) {
  const rows = await q.query<AuditRow>(
    `select id, at, actor_id, actor_label, action, target, detail from audit_log
      where tenant_id = $1 and at > now() - make_interval(days => $2::int) order by at desc, id desc limit $3`,
    [tenantId, days, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    at: iso(r.at)!,
    actor: { id: r.actor_id, label: r.actor_label },
    action: r.action,
    target: r.target,
    detail: r.detail,
  }));
}

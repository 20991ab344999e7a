import type { Agent } from '../../core/context.ts';
import { iso, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';

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

/**
 * Another tenant's log as an operator may see it (aggregates only): how often each
 * action happened per UTC day, newest day first; no actor, target or detail.
 */
export async function summarizeAudit(q: Queryable, tenantId: string, days: number, limit: number) {
  return q.query<{ day: string; action: string; count: number }>(
    `select to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day, action, count(*)::int as count from audit_log
      where tenant_id = $1 and at > now() - make_interval(days => $2::int)
      group by 1, 2 order by 1 desc, 2 limit $3`,
    [tenantId, days, limit],
  );
}

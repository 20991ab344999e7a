import type { AuthedCtx } from '../../core/context.ts';
import { forbidden, notFound } from '../../core/errors.ts';
import { iso, isUuid } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Promotion, PromotionState } from '../../schemas/promotion.ts';
import type { CollectionScope } from '../../schemas/people.ts';
import { controlQueryable } from '../tenant-db/tenant-app.ts';

/** A promotion as stored (sql/049_promotions.sql). */
export interface PromotionRow {
  id: string;
  state: PromotionState;
  from_collection: string;
  to_collection: string;
  memory_ids: string[];
  note: string | null;
  proposed_by_id: string;
  proposed_by_label: string;
  proposed_by_agent_id: string | null;
  proposed_by_agent_label: string | null;
  reason: string | null;
  decided_by_id: string | null;
  decided_by_label: string | null;
  decided_by_agent_id: string | null;
  decided_by_agent_label: string | null;
  decided_at: Date | null;
  created_memory_ids: string[];
  created_at: Date;
}

const who = (id: string | null, label: string | null) => (id ? { id, label: label ?? '' } : null);

/**
 * The rows as the API shows them, each with its memories as they stand now (read in `q`): the
 * reviewer reads them here, not in the personal collection, which only its owner reads. A memory
 * deleted or held since is left out (a held memory is served to nobody: docs/trust.md).
 */
export async function promotionViews(q: Queryable, tenantId: string, rows: PromotionRow[]): Promise<Promotion[]> {
  const ids = [...new Set(rows.flatMap((r) => r.memory_ids))];
  const found = ids.length
    ? await q.query<{ id: string; text: string; category: string; observed_at: Date }>(
        'select id, text, category, observed_at from memories where tenant_id = $1 and id = any($2::uuid[]) and not held',
        [tenantId, ids],
      )
    : [];
  const byId = new Map(found.map((m) => [m.id, { ...m, observed_at: iso(m.observed_at)! }]));
  return rows.map((r) => ({
    id: r.id,
    state: r.state,
    from_collection: r.from_collection,
    to_collection: r.to_collection,
    memory_ids: r.memory_ids,
    memories: r.memory_ids.flatMap((id) => byId.get(id) ?? []),
    note: r.note,
    proposed_by: who(r.proposed_by_id, r.proposed_by_label)!,
    proposed_by_agent: who(r.proposed_by_agent_id, r.proposed_by_agent_label),
    reason: r.reason,
    decided_by: who(r.decided_by_id, r.decided_by_label),
    decided_by_agent: who(r.decided_by_agent_id, r.decided_by_agent_label),
    decided_at: iso(r.decided_at),
    created_memory_ids: r.created_memory_ids,
    created_at: iso(r.created_at)!,
  }));
}

/** Who may decide promotions for the caller: as a tenant admin (org collections), and the teams they are an admin of (their team collections). */
export interface Reviewer {
  admin: boolean;
  teams: string[];
}

/**
 * The caller as a reviewer (docs/promotion.md, "Who reviews"): a person's own role and team roles
 * (their agents review as them), or for a key of no person its admin role; such a key is in no team.
 */
export async function reviewerOf(ctx: AuthedCtx, q: Queryable = ctx.app.db): Promise<Reviewer> {
  const person = ctx.agent.for;
  if (!person) return { admin: ctx.agent.role === 'admin', teams: [] };
  // Teams live on the platform: in `q`'s transaction when that is the same database.
  const teams = await controlQueryable(ctx.app, q).query<{ team_id: string }>(
    `select team_id from team_members where tenant_id = $1 and person_id = $2 and role = 'admin'`,
    [ctx.tenant.id, person.id],
  );
  return { admin: person.role === 'owner' || person.role === 'admin', teams: teams.map((t) => t.team_id) };
}

/** SQL condition on a collection `c` (its scope and teams) that the reviewer (`admin` and `teams` parameters) decides for. */
export const reviewsSql = (admin: string, teams: string) => `((c.scope = 'org' and ${admin}::boolean) or (c.scope = 'team' and c.teams && ${teams}::uuid[]))`;

export interface CollectionScopeRow {
  scope: CollectionScope;
  owner_person_id: string | null;
  teams: string[];
}

export const reviews = (reviewer: Reviewer, target: CollectionScopeRow) =>
  target.scope === 'org' ? reviewer.admin : target.scope === 'team' && target.teams.some((t) => reviewer.teams.includes(t));

/** A collection's scope, or 404. */
export async function scopeOf(q: Queryable, tenantId: string, name: string): Promise<CollectionScopeRow> {
  const [row] = await q.query<CollectionScopeRow>('select scope, owner_person_id, teams from collections where tenant_id = $1 and name = $2', [tenantId, name]);
  if (!row) throw notFound(`Collection "${name}" not found`);
  return row;
}

export const missingPromotion = (id: string) => notFound(`No promotion ${id} of this tenant that you proposed or review`);

/** A promotion of the tenant (locked until the transaction ends with `forUpdate`), or 404. */
export async function findPromotion(q: Queryable, ctx: AuthedCtx, id: string, forUpdate = false): Promise<PromotionRow> {
  const [row] = isUuid(id)
    ? await q.query<PromotionRow>(`select * from promotions where tenant_id = $1 and id = $2${forUpdate ? ' for update' : ''}`, [ctx.tenant.id, id])
    : [];
  if (!row) throw missingPromotion(id);
  return row;
}

/** 403 unless the caller reviews the promotion's target. */
export async function checkReviewer(q: Queryable, ctx: AuthedCtx, row: PromotionRow): Promise<void> {
  const target = await scopeOf(q, ctx.tenant.id, row.to_collection);
  if (reviews(await reviewerOf(ctx, q), target)) return;
  const whom = target.scope === 'team' ? 'an admin of one of its teams' : 'an admin of the tenant';
  const own = row.proposed_by_id === ctx.agent.for?.id ? ' (a proposer decides their own proposal only when they review its target too)' : '';
  throw forbidden(`Only ${whom} decides what is promoted to collection "${row.to_collection}"${own}`);
}

/** The person and the agent of a call, as a promotion records them: the agent is null when it is the person's own session. */
export function actorsOf(ctx: AuthedCtx) {
  const person = ctx.agent.for ?? null;
  const agent = person && person.id === ctx.agent.id ? null : { id: ctx.agent.id || null, label: ctx.agent.label };
  return { person, agent };
}

import type { AuthedCtx } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { CHANGE_STATES } from '../../schemas/consolidation.ts';
import type { Change, ChangesetView, EvidenceMemory } from '../../schemas/consolidation.ts';
import { getCollection } from '../memory/collections.ts';
import type { Proposed } from './proposals.ts';

/** A change set as stored (sql/045) and as the API shows it (docs/consolidation.md). */

export interface ChangesetRow {
  id: string;
  collection: string;
  state: ChangesetView['state'];
  trigger: ChangesetView['trigger'];
  agent_id: string | null;
  similarity: number;
  scanned: number;
  errors: Array<{ detail: string }>;
  error: string | null;
  took_ms: number | null;
  created_at: Date;
  finished_at: Date | null;
}

/** What applying a change wrote, per memory: the columns before and the updated_at after, so an undo restores them. */
export interface AppliedMemory {
  id: string;
  before: { archived: boolean; superseded_by: string | null; superseded_at: string | null; valid_to: string | null; updated_at: string };
  updated_at: string;
}

export interface ChangeRow {
  id: string;
  kind: Change['kind'];
  state: Change['state'];
  memory_ids: string[];
  proposal: Change['proposal'];
  evidence: Change['evidence'];
  applied: AppliedMemory[] | null;
  detail: string | null;
  applied_at: Date | null;
  undone_at: Date | null;
}

/** A new change set, running, for a collection that exists. */
export async function createChangeset(q: Queryable, ctx: AuthedCtx | null, tenantId: string, collection: string, similarity: number) {
  const id = newId();
  await q.query('insert into changesets (tenant_id, id, collection, trigger, agent_id, similarity) values ($1, $2, $3, $4, $5, $6)', [
    tenantId,
    id,
    collection,
    ctx ? 'request' : 'schedule',
    ctx?.agent.id ?? null,
    similarity,
  ]);
  return id;
}

/** The proposals of a finished run, in order, with the memories they touch as evidence. */
export async function storeProposals(q: Queryable, tenantId: string, changesetId: string, proposals: Proposed[], evidence: Map<string, EvidenceMemory>) {
  for (const [position, p] of proposals.entries()) {
    await q.query(
      `insert into changeset_changes (tenant_id, changeset_id, id, position, kind, memory_ids, proposal, evidence)
       values ($1, $2, $3, $4, $5, $6::uuid[], $7::jsonb, $8::jsonb)`,
      [
        tenantId,
        changesetId,
        newId(),
        position,
        p.kind,
        p.members,
        { keep_id: p.keep_id, memory_ids: p.memory_ids, valid_to: p.valid_to },
        { memories: p.members.map((id) => evidence.get(id)!), similarity: p.similarity, reason: p.reason, proposed_by: p.proposed_by },
      ],
    );
  }
}

const SUMMARY = `select id, collection, state, trigger, agent_id, similarity, scanned, errors, error, took_ms, created_at, finished_at from changesets`;

export async function changesetRow(q: Queryable, tenantId: string, collection: string, id: string): Promise<ChangesetRow> {
  const [row] = isUuid(id) ? await q.query<ChangesetRow>(`${SUMMARY} where tenant_id = $1 and collection = $2 and id = $3`, [tenantId, collection, id]) : [];
  if (!row) throw notFound(`Change set ${JSON.stringify(id)} not found in collection "${collection}"`);
  return row;
}

export async function changeRows(q: Queryable, tenantId: string, changesetId: string): Promise<ChangeRow[]> {
  return q.query<ChangeRow>(
    `select id, kind, state, memory_ids, proposal, evidence, applied, detail, applied_at, undone_at
       from changeset_changes where tenant_id = $1 and changeset_id = $2 order by position`,
    [tenantId, changesetId],
  );
}

const counts = (states: Array<Change['state']>) =>
  Object.fromEntries(CHANGE_STATES.map((s) => [s, states.filter((x) => x === s).length])) as ChangesetView['counts'];

function summaryView(row: ChangesetRow, states: Array<Change['state']>) {
  return {
    id: row.id,
    collection: row.collection,
    state: row.state,
    trigger: row.trigger,
    similarity: row.similarity,
    scanned: row.scanned,
    counts: counts(states),
    errors: row.errors,
    error: row.error,
    took_ms: row.took_ms,
    created_at: iso(row.created_at)!,
    finished_at: iso(row.finished_at),
  };
}

export const changeView = (c: ChangeRow): Change => ({
  id: c.id,
  kind: c.kind,
  state: c.state,
  proposal: c.proposal,
  evidence: c.evidence,
  detail: c.detail,
  applied_at: iso(c.applied_at),
  undone_at: iso(c.undone_at),
});

export async function getChangeset(ctx: AuthedCtx, collection: string, id: string): Promise<ChangesetView> {
  const row = await changesetRow(ctx.app.db, ctx.tenant.id, collection, id);
  const changes = await changeRows(ctx.app.db, ctx.tenant.id, id);
  return {
    ...summaryView(
      row,
      changes.map((c) => c.state),
    ),
    changes: changes.map(changeView),
  };
}

/** The collection's change sets, newest first, with their counts (not their changes). */
export async function listChangesets(ctx: AuthedCtx, collection: string, state: ChangesetView['state'] | undefined, limit: number) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const rows = await ctx.app.db.query<ChangesetRow>(
    `${SUMMARY} where tenant_id = $1 and collection = $2 and ($3::text is null or state = $3) order by created_at desc, id desc limit $4`,
    [ctx.tenant.id, collection, state ?? null, limit],
  );
  const states = rows.length
    ? await ctx.app.db.query<{ changeset_id: string; state: Change['state'] }>(
        'select changeset_id, state from changeset_changes where tenant_id = $1 and changeset_id = any($2::uuid[])',
        [ctx.tenant.id, rows.map((r) => r.id)],
      )
    : [];
  return {
    changesets: rows.map((r) =>
      summaryView(
        r,
        states.filter((s) => s.changeset_id === r.id).map((s) => s.state),
      ),
    ),
  };
}

/** A change set whose changes are all decided is reviewed; one with a change left proposed stays open. */
export async function settleChangeset(q: Queryable, tenantId: string, id: string) {
  await q.query(
    `update changesets set state = 'reviewed', reviewed_at = now()
      where tenant_id = $1 and id = $2 and state = 'open'
        and not exists (select 1 from changeset_changes where tenant_id = $1 and changeset_id = $2 and state = 'proposed')`,
    [tenantId, id],
  );
}

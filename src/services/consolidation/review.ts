import type { AuthedCtx } from '../../core/context.ts';
import { conflict, invalidInput, notFound } from '../../core/errors.ts';
import { iso, isUuid } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';
import { touchCollection } from '../memory/collections.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from '../memory/memory-view.ts';
import { changeRows, changesetRow, getChangeset, settleChangeset, type AppliedMemory, type ChangeRow } from './changesets.ts';

/*
 * Reviewing a change set (docs/consolidation.md, "Review"): each change is applied or undone in
 * one transaction of its own, all or nothing; a change whose memories moved on since it was
 * proposed (edited, pinned, deleted) fails with the reason and leaves them as they are. Nothing
 * is deleted: merged and archived memories are kept, linked to what replaced them.
 */

interface Touched {
  id: string;
  archived: boolean;
  pinned: boolean;
  superseded_by: string | null;
  superseded_at: Date | null;
  valid_from: Date;
  valid_to: Date | null;
  updated_at: Date;
}

/** The named changes of a change set (every one when `ids` is omitted); an id not in it is a 400. */
function chosen(changes: ChangeRow[], ids: string[] | undefined): ChangeRow[] {
  if (!ids) return changes;
  const known = new Set(changes.map((c) => c.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length) throw invalidInput(unknown.map((id) => ({ path: 'changes', message: `${JSON.stringify(id)} is not a change of this change set` })));
  const wanted = new Set(ids);
  return changes.filter((c) => wanted.has(c.id));
}

/** Applies the proposed changes named (all when `ids` is omitted); those already decided are left as they are. */
export async function applyChangeset(ctx: AuthedCtx, collection: string, id: string, ids?: string[]) {
  await applyChanges(ctx, collection, id, ids);
  return getChangeset(ctx, collection, id);
}

/** The work of applyChangeset, shared with a run's auto_apply. */
export async function applyChanges(ctx: AuthedCtx, collection: string, id: string, ids?: string[]) {
  const set = await changesetRow(ctx.app.db, ctx.tenant.id, collection, id);
  if (set.state === 'running') throw conflict('The run has not finished: wait for its change set to be open');
  if (set.state === 'failed') throw conflict(`The run failed (${set.error}); it proposed nothing to apply`);
  for (const change of chosen(await changeRows(ctx.app.db, ctx.tenant.id, id), ids)) {
    if (change.state !== 'proposed') continue;
    await ctx.app.db.transaction(async (tx) => {
      const failure = await applyOne(tx, ctx, collection, change);
      await tx.query(
        failure
          ? `update changeset_changes set state = 'failed', detail = $4 where tenant_id = $1 and changeset_id = $2 and id = $3`
          : `update changeset_changes set state = 'applied', applied_at = now() where tenant_id = $1 and changeset_id = $2 and id = $3`,
        [ctx.tenant.id, id, change.id, ...(failure ? [failure.detail] : [])],
      );
    });
  }
  await settleChangeset(ctx.app.db, ctx.tenant.id, id);
}

/** Rejects the proposed changes named (all when `ids` is omitted): nothing changes in the memories. */
export async function rejectChangeset(ctx: AuthedCtx, collection: string, id: string, ids?: string[]) {
  const set = await changesetRow(ctx.app.db, ctx.tenant.id, collection, id);
  if (set.state === 'running') throw conflict('The run has not finished: wait for its change set to be open');
  const rejected = chosen(await changeRows(ctx.app.db, ctx.tenant.id, id), ids).filter((c) => c.state === 'proposed');
  await ctx.app.db.query(
    `update changeset_changes set state = 'rejected' where tenant_id = $1 and changeset_id = $2 and id = any($3::uuid[]) and state = 'proposed'`,
    [ctx.tenant.id, id, rejected.map((c) => c.id)],
  );
  await settleChangeset(ctx.app.db, ctx.tenant.id, id);
  return getChangeset(ctx, collection, id);
}

/** Why a change cannot be applied to these memories as they are now, or null. */
function refusal(change: ChangeRow, rows: Map<string, Touched>): string | null {
  const seen = new Map(change.evidence.memories.map((m) => [m.id, m]));
  for (const id of change.memory_ids) {
    const row = rows.get(id);
    if (!row) return `Memory ${id} is gone since the change was proposed`;
    if (iso(row.updated_at) !== seen.get(id)?.updated_at) return `Memory ${id} changed since the change was proposed`;
    if (row.pinned && change.proposal.memory_ids.includes(id)) return `Memory ${id} is pinned: consolidation never touches a pinned memory`;
  }
  const keep = change.proposal.keep_id && rows.get(change.proposal.keep_id);
  if (keep && (keep.archived || keep.superseded_by)) return `Memory ${keep.id}, the one kept, is archived or superseded now`;
  return null;
}

/** One change in its transaction: null when applied (its record written by the caller), else why not. */
async function applyOne(tx: Queryable, ctx: AuthedCtx, collection: string, change: ChangeRow): Promise<{ detail: string } | null> {
  const rows = await tx.query<Touched>(
    `select id, archived, pinned, superseded_by, superseded_at, valid_from, valid_to, updated_at from memories
      where tenant_id = $1 and collection = $2 and id = any($3::uuid[]) for update`,
    [ctx.tenant.id, collection, change.memory_ids],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const why = refusal(change, byId);
  if (why) return { detail: why };
  const { keep_id, memory_ids, valid_to } = change.proposal;
  const keeper = keep_id ? byId.get(keep_id)! : null;
  const applied: AppliedMemory[] = [];
  const changed: MemoryRow[] = [];
  // The transaction's time, read once: Citus refuses now() inside a CASE of a distributed update.
  const [{ now }] = (await tx.query<{ now: Date }>('select now() as now')) as [{ now: Date }];
  for (const id of memory_ids) {
    const before = byId.get(id)!;
    const set =
      change.kind === 'merge'
        ? { archived: true, superseded_by: keep_id, superseded_at: now, valid_to: iso(before.valid_to) }
        : change.kind === 'supersede'
          ? {
              archived: before.archived,
              superseded_by: keep_id,
              superseded_at: now,
              // A fact replaced stops holding where its successor starts (docs/time.md), never before it began.
              valid_to: iso(new Date(Math.min(before.valid_to?.getTime() ?? Infinity, Math.max(before.valid_from.getTime(), keeper!.valid_from.getTime())))),
            }
          : change.kind === 'archive'
            ? { archived: true, superseded_by: before.superseded_by, superseded_at: iso(before.superseded_at), valid_to: iso(before.valid_to) }
            : { archived: before.archived, superseded_by: before.superseded_by, superseded_at: iso(before.superseded_at), valid_to };
    const [row] = await tx.query<MemoryRow>(
      `update memories set archived = $3, superseded_by = $4::uuid,
         superseded_at = $5::timestamptz, valid_to = $6::timestamptz, updated_at = now()
        where tenant_id = $1 and id = $2 returning ${MEMORY_COLUMNS}`,
      [ctx.tenant.id, id, set.archived, set.superseded_by, set.superseded_at, set.valid_to],
    );
    applied.push({
      id,
      before: {
        archived: before.archived,
        superseded_by: before.superseded_by,
        superseded_at: iso(before.superseded_at),
        valid_to: iso(before.valid_to),
        updated_at: iso(before.updated_at)!,
      },
      updated_at: iso(row!.updated_at)!,
    });
    changed.push(row!);
  }
  await recordApplied(tx, ctx, change.id, applied);
  const archivedDelta = changed.filter((r) => r.archived).length - memory_ids.filter((id) => byId.get(id)!.archived).length;
  await touchCollection(tx, ctx.tenant.id, collection, 0, archivedDelta);
  await emitMemoryEvents(tx, ctx, 'memory.updated', collection, changed.map(memoryView));
  return null;
}

async function recordApplied(tx: Queryable, ctx: AuthedCtx, changeId: string, applied: AppliedMemory[]) {
  await tx.query(`update changeset_changes set applied = $3::jsonb where tenant_id = $1 and id = $2`, [ctx.tenant.id, changeId, applied]);
}

/**
 * Undoes an applied change: each memory it touched gets back the columns it had before, updated_at
 * included, so the memory is as it was. Refused (409) when one of them changed since the change was
 * applied or is gone: an undo never overwrites a later edit.
 */
export async function undoChange(ctx: AuthedCtx, collection: string, id: string, changeId: string) {
  await changesetRow(ctx.app.db, ctx.tenant.id, collection, id);
  const change = isUuid(changeId) ? (await changeRows(ctx.app.db, ctx.tenant.id, id)).find((c) => c.id === changeId) : undefined;
  if (!change) throw notFound(`Change ${JSON.stringify(changeId)} not found in change set ${id}`);
  if (change.state !== 'applied') throw conflict(`Only an applied change can be undone; this one is ${change.state}`);
  await ctx.app.db.transaction(async (tx) => {
    const applied = change.applied!;
    const rows = await tx.query<{ id: string; archived: boolean; updated_at: Date }>(
      'select id, archived, updated_at from memories where tenant_id = $1 and collection = $2 and id = any($3::uuid[]) for update',
      [ctx.tenant.id, collection, applied.map((a) => a.id)],
    );
    const now = new Map(rows.map((r) => [r.id, r]));
    for (const a of applied) {
      const row = now.get(a.id);
      if (!row) throw conflict(`Memory ${a.id} is gone since the change was applied: the change cannot be undone`);
      if (iso(row.updated_at) !== a.updated_at) throw conflict(`Memory ${a.id} changed since the change was applied: undo would overwrite that edit`);
    }
    const restored: MemoryRow[] = [];
    for (const a of applied) {
      const [row] = await tx.query<MemoryRow>(
        `update memories set archived = $3, superseded_by = $4::uuid, superseded_at = $5::timestamptz, valid_to = $6::timestamptz, updated_at = $7::timestamptz
          where tenant_id = $1 and id = $2 returning ${MEMORY_COLUMNS}`,
        [ctx.tenant.id, a.id, a.before.archived, a.before.superseded_by, a.before.superseded_at, a.before.valid_to, a.before.updated_at],
      );
      restored.push(row!);
    }
    const archivedDelta = applied.filter((a) => a.before.archived).length - applied.filter((a) => now.get(a.id)!.archived).length;
    await touchCollection(tx, ctx.tenant.id, collection, 0, archivedDelta);
    await tx.query(`update changeset_changes set state = 'undone', undone_at = now() where tenant_id = $1 and changeset_id = $2 and id = $3`, [
      ctx.tenant.id,
      id,
      changeId,
    ]);
    await emitMemoryEvents(tx, ctx, 'memory.updated', collection, restored.map(memoryView));
  });
  return getChangeset(ctx, collection, id);
}

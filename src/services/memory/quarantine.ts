import type { AuthedCtx } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { decodeCursor, encodeCursor } from '../../core/cursor.ts';
import { isUuid } from '../../core/ids.ts';
import type { Memory } from '../../schemas/memory.ts';
import type { Quarantine } from '../../schemas/trust.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';
import { touchCollection } from './collections.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from './memory-view.ts';

/**
 * The quarantine's review (docs/trust.md, "Quarantine"): the memories held because their text
 * tries to instruct an agent, and an admin's decision on each. Only admin keys reach it (the
 * procedures' key role); invoke audits both decisions.
 */
export async function listQuarantine(ctx: AuthedCtx, input: { state: Quarantine['state']; limit: number; cursor?: string }) {
  const params: unknown[] = [ctx.tenant.id, input.state, input.limit + 1];
  let after = '';
  if (input.cursor !== undefined) {
    params.push(...decodeCursor(input.cursor));
    after = 'and (created_at, id) < ($4::timestamptz, $5::uuid)';
  }
  const rows = await ctx.app.db.query<MemoryRow>(
    `select ${MEMORY_COLUMNS} from memories
      where tenant_id = $1 and quarantine is not null and quarantine->>'state' = $2 ${after}
      order by created_at desc, id desc limit $3`,
    params,
  );
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    memories: page.map(memoryView),
    next: rows.length > input.limit && last ? encodeCursor(last.created_at, last.id) : null,
  };
}

type Decision = 'released' | 'rejected';

/**
 * An admin's decision on a held memory: released, it is served from then on; rejected, it stays
 * held and is archived. Deciding twice the same way answers the memory as it is; a memory not
 * held (never, or decided the other way) is a 409.
 */
export async function decideQuarantine(ctx: AuthedCtx, id: string, decision: Decision): Promise<Memory> {
  const missing = () => notFound(`No memory ${id} of this tenant is in quarantine`);
  if (!isUuid(id)) throw missing();
  return ctx.app.db.transaction(async (tx) => {
    const [row] = await tx.query<MemoryRow>(`select ${MEMORY_COLUMNS} from memories where tenant_id = $1 and id = $2 and quarantine is not null for update`, [
      ctx.tenant.id,
      id,
    ]);
    if (!row || row.quarantine?.state === 'flagged') throw missing();
    if (row.quarantine!.state === decision) return memoryView(row);
    if (row.quarantine!.state !== 'held') throw conflict(`Memory ${id} was ${row.quarantine!.state} already; a decision is not taken back`);
    const decided = { state: decision, decided_by: { id: ctx.agent.id || null, label: ctx.agent.label }, decided_at: new Date().toISOString() };
    const [updated] = await tx.query<MemoryRow>(
      `update memories set quarantine = quarantine || $3::jsonb, held = $4, archived = archived or $5, updated_at = now()
        where tenant_id = $1 and id = $2 returning ${MEMORY_COLUMNS}`,
      [ctx.tenant.id, id, decided, decision === 'rejected', decision === 'rejected'],
    );
    // Every decision bumps the collection's version, not only one that archives: a release changes
    // what search serves, and cached answers are keyed by that version (docs/search.md, step 2).
    await touchCollection(tx, ctx.tenant.id, row.collection, 0, Number(updated!.archived) - Number(row.archived));
    const memory = memoryView(updated!);
    await emitMemoryEvents(tx, ctx, 'memory.updated', row.collection, [memory]);
    return memory;
  });
}

/**
 * Holds (or, where the tenant flags its class, flags) memories after the fact, on the tenant
 * LLM's second opinion (docs/trust.md, "Second opinion"): only one not held, flagged or decided
 * yet, so that an admin's release is never taken back. Answers the memories it changed.
 */
export async function holdAfterWrite(
  ctx: { app: AuthedCtx['app']; tenant: { id: string } },
  verdicts: Array<{ id: string; reasons: string[]; held: boolean }>,
): Promise<Memory[]> {
  if (!verdicts.length) return [];
  return ctx.app.db.transaction(async (tx) => {
    const changed: Memory[] = [];
    const at = new Date().toISOString();
    for (const v of verdicts) {
      const quarantine = { state: v.held ? 'held' : 'flagged', reasons: v.reasons, at, decided_by: null, decided_at: null };
      const [row] = await tx.query<MemoryRow>(
        `update memories set held = $3, quarantine = $4::jsonb, updated_at = now()
          where tenant_id = $1 and id = $2 and quarantine is null and not held returning ${MEMORY_COLUMNS}`,
        [ctx.tenant.id, v.id, v.held, quarantine],
      );
      if (row) changed.push(memoryView(row));
    }
    for (const collection of new Set(changed.map((m) => m.collection))) {
      // A new version, so that no cached answer keeps serving what is now held (docs/search.md).
      await touchCollection(tx, ctx.tenant.id, collection, 0);
      const here = changed.filter((m) => m.collection === collection);
      await emitMemoryEvents(tx, ctx, 'memory.updated', collection, here);
      const held = here.filter((m) => m.quarantine?.state === 'held');
      if (held.length) await emitMemoryEvents(tx, ctx, 'memory.quarantined', collection, held);
    }
    return changed;
  });
}

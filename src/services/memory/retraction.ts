import type { AuthedCtx } from '../../core/context.ts';
import { conflict, invalidInput } from '../../core/errors.ts';
import type { Memory } from '../../schemas/memory.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';
import { touchCollection } from './collections.ts';
import { findServable } from './memories.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow, type StoredRetraction } from './memory-view.ts';

export interface RetractInput {
  how: 'ended' | 'wrong';
  at?: string;
  reason?: string | null;
}

/**
 * Retracts one memory (docs/time.md, "Retraction"). "ended": it stopped being true at `at` (now
 * when left out), which closes its validity there; "wrong": it was never true, and no search finds
 * it, current or as of any moment. Nothing is deleted: the valid_to it replaces is kept, so that
 * undoing the retraction gives the memory back as it was.
 */
export async function retractMemory(ctx: AuthedCtx, collection: string, id: string, input: RetractInput): Promise<Memory> {
  if (input.how === 'wrong' && input.at !== undefined) throw invalidInput([{ path: 'at', message: 'only a retraction as "ended" has a moment' }]);
  return ctx.app.db.transaction(async (tx) => {
    const row = await findServable(tx, ctx, collection, id, true);
    if (row.retraction) throw conflict(`Memory ${id} is already retracted (${row.retraction.how}): undo that first with DELETE .../retract`);
    const now = new Date();
    const at = input.how === 'ended' ? new Date(input.at ?? now) : null;
    if (at && at <= row.valid_from)
      throw invalidInput([{ path: 'at', message: `must be later than the memory's valid_from (${row.valid_from.toISOString()})` }]);
    const retraction: StoredRetraction = {
      how: input.how,
      at: at?.toISOString() ?? null,
      reason: input.reason ?? null,
      retracted_at: now.toISOString(),
      valid_to_before: row.valid_to?.toISOString() ?? null,
    };
    const memory = await write(tx, ctx, collection, id, retraction, at ? at.toISOString() : retraction.valid_to_before);
    await emitMemoryEvents(tx, ctx, 'memory.retracted', collection, [memory]);
    return memory;
  });
}

/**
 * Undoes a retraction: the memory's validity is again what it was before it. Idempotent, as a
 * DELETE is: a memory that is not retracted is answered as it is, and nothing is written.
 */
export async function unretractMemory(ctx: AuthedCtx, collection: string, id: string): Promise<Memory> {
  return ctx.app.db.transaction(async (tx) => {
    const row = await findServable(tx, ctx, collection, id, true);
    if (!row.retraction) return memoryView(row);
    const memory = await write(tx, ctx, collection, id, null, row.retraction.valid_to_before);
    await emitMemoryEvents(tx, ctx, 'memory.updated', collection, [memory]);
    return memory;
  });
}

/** Sets the retraction and valid_to; expired_at is cleared for the hourly sweep to mark again if the new valid_to has passed. */
async function write(
  tx: Parameters<typeof findServable>[0],
  ctx: AuthedCtx,
  collection: string,
  id: string,
  retraction: StoredRetraction | null,
  validTo: string | null,
) {
  const [row] = await tx.query<MemoryRow>(
    `update memories set retraction = $4::jsonb, valid_to = $5::timestamptz, expired_at = null, updated_at = now()
      where tenant_id = $1 and id = $2 and collection = $3 returning ${MEMORY_COLUMNS}`,
    [ctx.tenant.id, id, collection, retraction, validTo],
  );
  await touchCollection(tx, ctx.tenant.id, collection, 0);
  return memoryView(row!);
}

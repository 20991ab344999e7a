import type { AuthedCtx } from '../../core/context.ts';
import type { MemoryHistory } from '../../schemas/memory.ts';
import { callerIds, collectionLimit, readableCollectionSql } from '../access/grants.ts';
import { handOver } from '../ledger/handover.ts';
import { findServable, seesHeld } from './memories.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from './memory-view.ts';

/** Steps followed each way: a fact replaced more often than this is a loop, not a history. */
const MAX_STEPS = 100;
/** Older facts answered at most: a fact that merged many duplicates may have superseded that many. */
const MAX_OLDER = 500;

type Step = MemoryRow & { superseded_by: string | null; steps: number };

/**
 * A memory's supersession history both ways (docs/time.md, "Supersession"): the facts that
 * superseded it, one after the other up to the one that holds now, and the facts it superseded,
 * directly or through them. Supersession is followed by id, since a memory may have moved to
 * another collection since; facts in a collection the key may not read are left out.
 */
export async function memoryHistory(ctx: AuthedCtx, collection: string, id: string): Promise<MemoryHistory> {
  const memory = await findServable(ctx.app.db, ctx, collection, id);
  const [self] = await ctx.app.db.query<{ superseded_by: string | null }>('select superseded_by from memories where tenant_id = $1 and id = $2', [
    ctx.tenant.id,
    id,
  ]);
  // A held memory is in nobody's history but an admin's (docs/trust.md).
  const readable = (limitParam: string) =>
    `${readableCollectionSql('memories.collection', '$1', '$3', limitParam)}${seesHeld(ctx) ? '' : ' and not memories.held'}`;
  const newer = await ctx.app.db.query<Step>(
    `with recursive chain (id, steps) as (
       select superseded_by, 1 from memories where tenant_id = $1 and id = $2 and superseded_by is not null
       union all
       select m.superseded_by, c.steps + 1 from chain c join memories m on m.tenant_id = $1 and m.id = c.id
        where m.superseded_by is not null and c.steps < $4
     )
     select ${MEMORY_COLUMNS}, superseded_by, steps from memories join chain using (id)
      where tenant_id = $1 and ${readable('$5')} order by steps`,
    [ctx.tenant.id, id, callerIds(ctx), MAX_STEPS, collectionLimit(ctx)],
  );
  const older = await ctx.app.db.query<Step>(
    `with recursive back (id, steps) as (
       select id, 1 from memories where tenant_id = $1 and superseded_by = $2
       union all
       select m.id, b.steps + 1 from back b join memories m on m.tenant_id = $1 and m.superseded_by = b.id where b.steps < $4
     )
     select ${MEMORY_COLUMNS}, superseded_by, steps from memories join back using (id)
      where tenant_id = $1 and ${readable('$6')} order by steps, superseded_at desc, id limit $5`,
    [ctx.tenant.id, id, callerIds(ctx), MAX_STEPS, MAX_OLDER, collectionLimit(ctx)],
  );
  const entry = (r: Step) => ({ memory: memoryView(r), superseded_by: r.superseded_by, steps: r.steps });
  handOver(ctx, [memory.id, ...newer.map((r) => r.id), ...older.map((r) => r.id)], false);
  return { memory: memoryView(memory), superseded_by: self?.superseded_by ?? null, newer: newer.map(entry), older: older.map(entry) };
}

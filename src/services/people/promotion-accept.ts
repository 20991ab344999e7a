import type { AuthedCtx } from '../../core/context.ts';
import { conflict } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import type { Promotion } from '../../schemas/promotion.ts';
import type { TrustClass } from '../../schemas/trust.ts';
import { resolveGrants } from '../access/grants.ts';
import { insertMemories, type NewMemory } from '../memory/memories.ts';
import { MEMORY_COLUMNS, type MemoryRow } from '../memory/memory-view.ts';
import { checkReviewer, findPromotion, type PromotionRow } from './promotion-view.ts';
import { announce, checkOpen, recordDecision } from './promotions.ts';

type Source = MemoryRow & { embedding_text: string };

/**
 * A reviewer accepts a promotion (docs/promotion.md, "Accepting"): each proposed memory is copied
 * into the target through the memory domain's insert, so the copy is screened, evented and counted
 * like any write, with its times and its source's trust class kept and `metadata.promoted_from`
 * naming where it came from. The copy takes its source's embedding (of the same text, by the
 * same embedder): no model is called inside the transaction. All of it commits as one, or nothing.
 */
export async function acceptPromotion(ctx: AuthedCtx, id: string): Promise<Promotion> {
  const proposal = await findPromotion(ctx.app.db, ctx, id);
  await checkReviewer(ctx.app.db, ctx, proposal);
  // The copies are the reviewer's writes: the target's grants must let them write it too.
  await resolveGrants(ctx, { field: 'collection', permission: 'write' }, { collection: proposal.to_collection }, false);
  return ctx.app.db.transaction(async (tx) => {
    const row = await findPromotion(tx, ctx, id, true);
    checkOpen(row);
    const sources = await tx.query<Source>(
      `select ${MEMORY_COLUMNS}, embedding::text as embedding_text from memories where tenant_id = $1 and collection = $2 and id = any($3::uuid[])`,
      [ctx.tenant.id, row.from_collection, row.memory_ids],
    );
    const byId = new Map(sources.map((m) => [m.id, m]));
    const gone = row.memory_ids.find((m) => !byId.get(m) || byId.get(m)!.held);
    if (gone) throw conflict(`Memory ${gone} was deleted or held in quarantine since it was proposed: reject the promotion, or withdraw it and propose again`);
    const created = new Map<string, string>();
    // One insert per trust class: a promoted memory keeps the class of what its text came from (docs/trust.md).
    const classes = new Set(sources.map((m) => m.trust));
    for (const trust of classes) {
      const group = row.memory_ids.map((m) => byId.get(m)!).filter((m) => m.trust === trust);
      const copies = await insertMemories(
        tx,
        ctx,
        row.to_collection,
        group.map((m) => copyOf(ctx, row, m)),
        group.map((m) => JSON.parse(m.embedding_text) as number[]),
        { trust: trust as TrustClass },
      );
      group.forEach((m, i) => created.set(m.id, copies[i]!.id));
    }
    const decided = await recordDecision(tx, ctx, row, 'accepted', { created_memory_ids: row.memory_ids.map((m) => created.get(m)!) });
    return announce(tx, ctx, decided, 'promotion.accepted');
  });
}

/** The copy of a source memory: its text, facets and times, and where it came from. Files are not copied: each stays with its memory. */
function copyOf(ctx: AuthedCtx, row: PromotionRow, m: MemoryRow): NewMemory {
  const promoted_from = {
    collection: row.from_collection,
    memory_id: m.id,
    promotion_id: row.id,
    proposed_by: { id: row.proposed_by_id, label: row.proposed_by_label },
    accepted_by: ctx.agent.for ? { id: ctx.agent.for.id, label: ctx.agent.for.label } : { id: ctx.agent.id, label: ctx.agent.label },
  };
  return {
    text: m.text,
    importance: m.importance,
    category: m.category,
    source: m.source,
    metadata: { ...m.metadata, promoted_from },
    container_tag: m.container_tag,
    observed_at: iso(m.observed_at)!,
    valid_from: iso(m.valid_from)!,
    valid_to: iso(m.valid_to),
  };
}

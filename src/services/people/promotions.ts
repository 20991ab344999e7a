import type { AuthedCtx } from '../../core/context.ts';
import { decodeCursor, encodeCursor } from '../../core/cursor.ts';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import { isUuid, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Promotion, PromotionState } from '../../schemas/promotion.ts';
import { emitTenantEvent } from '../events/tenant-events.ts';
import {
  actorsOf,
  checkReviewer,
  findPromotion,
  missingPromotion,
  promotionViews,
  reviewerOf,
  reviews,
  reviewsSql,
  scopeOf,
  type PromotionRow,
} from './promotion-view.ts';

/*
 * Promotion with review (docs/promotion.md): a person proposes memories of their personal
 * collection to a team or org collection; a reviewer of the target accepts (promotion-accept.ts)
 * or rejects; the proposer may withdraw while it waits. The call's grants were resolved by
 * `invoke` (the source is read); who reviews what is decided here, from the target's scope.
 */

export async function proposePromotion(
  ctx: AuthedCtx,
  input: { memory_ids: string[]; from_collection: string; to_collection: string; note?: string },
): Promise<Promotion> {
  const { person, agent } = actorsOf(ctx);
  if (!person) throw badRequest("A promotion is proposed by a person: this key acts for none (use a person's session or a key they made)");
  const ids = [...new Set(input.memory_ids)];
  return ctx.app.db.transaction(async (tx) => {
    const from = await scopeOf(tx, ctx.tenant.id, input.from_collection);
    if (from.scope !== 'personal')
      throw badRequest(`Collection "${input.from_collection}" is not personal: only a personal collection's memories are promoted`);
    if (from.owner_person_id !== person.id)
      throw forbidden(`Collection "${input.from_collection}" is personal to someone else: only its owner proposes its memories`);
    const to = await scopeOf(tx, ctx.tenant.id, input.to_collection);
    if (to.scope === 'personal') throw badRequest(`Collection "${input.to_collection}" is personal: memories are promoted to a team or org collection`);
    const found = await tx.query<{ id: string; held: boolean }>(
      'select id, held from memories where tenant_id = $1 and collection = $2 and id = any($3::uuid[])',
      // An id that is no UUID names no memory: it is reported missing below, as any other.
      [ctx.tenant.id, input.from_collection, ids.filter(isUuid)],
    );
    const missing = ids.find((id) => !found.some((m) => m.id === id));
    if (missing) throw notFound(`Memory ${missing} not found in collection "${input.from_collection}"`);
    const held = found.find((m) => m.held);
    if (held) throw badRequest(`Memory ${held.id} is held in quarantine: it is served to nobody, so it cannot be proposed (docs/trust.md)`);
    const [row] = await tx.query<PromotionRow>(
      `insert into promotions (tenant_id, id, from_collection, to_collection, memory_ids, note, proposed_by_id, proposed_by_label,
                               proposed_by_agent_id, proposed_by_agent_label, created_at)
       values ($1, $2, $3, $4, $5::uuid[], $6, $7, $8, $9, $10, $11) returning *`,
      [
        ctx.tenant.id,
        newId(),
        input.from_collection,
        input.to_collection,
        ids,
        input.note || null,
        person.id,
        person.label,
        agent?.id ?? null,
        agent?.label ?? null,
        new Date(),
      ],
    );
    return announce(tx, ctx, row!, 'promotion.proposed');
  });
}

/** The row as the API shows it, announced to the tenant's webhook in the write's transaction. */
export async function announce(
  tx: Queryable,
  ctx: AuthedCtx,
  row: PromotionRow,
  type: 'promotion.proposed' | 'promotion.accepted' | 'promotion.rejected' | null,
): Promise<Promotion> {
  const [view] = await promotionViews(tx, ctx.tenant.id, [row]);
  // The event names the promotion and its people, not the memories' texts: a receiver reads them through the API.
  if (type) await emitTenantEvent(tx, ctx, type, { promotion: { ...view!, memories: undefined } });
  return view!;
}

/**
 * The promotions the caller sees, newest first: those they review (`reviewing`) and those they
 * proposed (`mine`), both when `as` is left out.
 */
export async function listPromotions(ctx: AuthedCtx, input: { state?: PromotionState; as?: 'reviewer' | 'proposer'; limit: number; cursor?: string }) {
  const reviewer = await reviewerOf(ctx);
  const me = ctx.agent.for?.id ?? null;
  const params: unknown[] = [
    ctx.tenant.id,
    input.state ?? null,
    input.limit + 1,
    reviewer.admin && input.as !== 'proposer',
    input.as === 'proposer' ? [] : reviewer.teams,
    input.as === 'reviewer' ? null : me,
  ];
  let after = '';
  if (input.cursor !== undefined) {
    params.push(...decodeCursor(input.cursor));
    after = 'and (p.created_at, p.id) < ($7::timestamptz, $8::uuid)';
  }
  const rows = await ctx.app.db.query<PromotionRow>(
    `select p.* from promotions p join collections c on c.tenant_id = p.tenant_id and c.name = p.to_collection
      where p.tenant_id = $1 and ($2::text is null or p.state = $2) and (${reviewsSql('$4', '$5')} or p.proposed_by_id = $6::uuid) ${after}
      order by p.created_at desc, p.id desc limit $3`,
    params,
  );
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    promotions: await promotionViews(ctx.app.db, ctx.tenant.id, page),
    next: rows.length > input.limit && last ? encodeCursor(last.created_at, last.id) : null,
  };
}

/** One promotion, to its proposer or a reviewer of its target; 404 to anyone else, as a missing one. */
export async function getPromotion(ctx: AuthedCtx, id: string): Promise<Promotion> {
  const row = await findPromotion(ctx.app.db, ctx, id);
  if (row.proposed_by_id !== ctx.agent.for?.id && !reviews(await reviewerOf(ctx), await scopeOf(ctx.app.db, ctx.tenant.id, row.to_collection)))
    throw missingPromotion(id);
  const [view] = await promotionViews(ctx.app.db, ctx.tenant.id, [row]);
  return view!;
}

/** 409 unless the promotion still waits for a decision. */
export function checkOpen(row: PromotionRow): void {
  if (row.state !== 'proposed') throw conflict(`Promotion ${row.id} was ${row.state} already; a decision is not taken back`);
}

/** Records a decision (the caller's person and agent, the time sent: docs/citus.md) on a locked row. */
export async function recordDecision(
  tx: Queryable,
  ctx: AuthedCtx,
  row: PromotionRow,
  state: Exclude<PromotionState, 'proposed'>,
  extra: { reason?: string; created_memory_ids?: string[] } = {},
): Promise<PromotionRow> {
  const { person, agent } = actorsOf(ctx);
  const [updated] = await tx.query<PromotionRow>(
    `update promotions set state = $3, reason = $4, decided_by_id = $5, decided_by_label = $6, decided_by_agent_id = $7, decided_by_agent_label = $8,
            decided_at = $9, created_memory_ids = $10::uuid[]
      where tenant_id = $1 and id = $2 returning *`,
    [
      ctx.tenant.id,
      row.id,
      state,
      extra.reason ?? null,
      person?.id ?? null,
      person?.label ?? null,
      agent?.id ?? null,
      agent?.label ?? null,
      new Date(),
      extra.created_memory_ids ?? [],
    ],
  );
  return updated!;
}

/** A reviewer's rejection, with the reason the proposer reads. */
export async function rejectPromotion(ctx: AuthedCtx, id: string, reason: string): Promise<Promotion> {
  return ctx.app.db.transaction(async (tx) => {
    const row = await findPromotion(tx, ctx, id, true);
    await checkReviewer(tx, ctx, row);
    checkOpen(row);
    return announce(tx, ctx, await recordDecision(tx, ctx, row, 'rejected', { reason }), 'promotion.rejected');
  });
}

/** The proposer takes back a proposal nobody decided yet (their agents too: they act for them). */
export async function withdrawPromotion(ctx: AuthedCtx, id: string): Promise<Promotion> {
  return ctx.app.db.transaction(async (tx) => {
    const row = await findPromotion(tx, ctx, id, true);
    if (row.proposed_by_id !== ctx.agent.for?.id) throw forbidden(`Only the person who proposed promotion ${id} withdraws it`);
    checkOpen(row);
    return announce(tx, ctx, await recordDecision(tx, ctx, row, 'withdrawn'), null);
  });
}

import type { AuthedCtx } from '../../core/context.ts';
import { toVectorLiteral } from '../../ports/db/db.ts';
import type { SearchResponse } from '../../schemas/search.ts';
import { deleteMemories } from '../memory/lifecycle.ts';
import { handOver } from '../ledger/handover.ts';
import { findServable } from '../memory/memories.ts';
import { answerKey, embedQuery, getAnswer, putAnswer } from './cache.ts';
import { vectorCandidates } from './candidates.ts';
import { NO_FILTERS } from './scope.ts';
import { candidateCount, expiryTtl, resolveScope, toResult } from './search.ts';

const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The memories nearest to one memory by embedding, in its collection: never itself, archived,
 * superseded or expired rows. Answered in the search-response shape and cached like a search.
 */
export async function related(ctx: AuthedCtx, input: { collection: string; id: string; limit: number; min_score: number }): Promise<SearchResponse> {
  const started = performance.now();
  await findServable(ctx.app.db, ctx, input.collection, input.id);
  const scope = await resolveScope(ctx, input.collection);
  const key = answerKey({ tenantId: ctx.tenant.id, kind: 'related', scope: scope.versions, request: input });
  const hit = getAnswer(ctx.app, key);
  if (hit) {
    handOver(
      ctx,
      hit.results.map((r) => r.id),
      false,
    );
    return { results: hit.results, query_embedding_ms: 0, search_ms: round2(performance.now() - started), cached: true };
  }
  const [target] = await ctx.app.db.query<{ embedding: string }>('select embedding::text as embedding from memories where tenant_id = $1 and id = $2', [
    ctx.tenant.id,
    input.id,
  ]);
  const rows = await vectorCandidates(ctx.app, scope, NO_FILTERS, { literal: target!.embedding }, candidateCount(input.limit), { excludeId: input.id });
  const results = rows
    .filter((r) => r.score >= input.min_score)
    .slice(0, input.limit)
    .map((r) => toResult(r, false));
  putAnswer(ctx.app, key, { results }, expiryTtl(rows));
  handOver(
    ctx,
    results.map((r) => r.id),
    false,
  );
  return { results, query_embedding_ms: 0, search_ms: round2(performance.now() - started), cached: false };
}

/**
 * Semantic forget: deletes up to `limit` memories of the collection at least `min_score`
 * similar to the query, the most similar first. Erasure reaches every copy, so archived,
 * superseded and expired memories count too.
 */
export async function forget(
  ctx: AuthedCtx,
  input: { collection: string; query: string; min_score: number; limit: number },
): Promise<{ deleted: number; ids: string[] }> {
  const scope = await resolveScope(ctx, input.collection);
  const { vector } = await embedQuery(ctx.app, input.query);
  const rows = await vectorCandidates(ctx.app, scope, NO_FILTERS, { literal: toVectorLiteral(vector) }, input.limit, { anyState: true });
  const ids = await deleteMemories(
    ctx,
    input.collection,
    rows.filter((r) => r.score >= input.min_score).map((r) => r.id),
  );
  return { deleted: ids.length, ids };
}

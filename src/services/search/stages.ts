import type { AuthedCtx } from '../../context.ts';
import { rerankCandidates as rerankWithLlm, rewriteSearchQuery } from './llm-steps.ts';
import type { CandidateRow } from './candidates.ts';

/**
 * The LLM stages of the search pipeline: query rewriting before retrieval, re-ranking after
 * fusion. Each is one LLM call when requested; without an LLM, over the spend cap, or when the
 * call fails, the stage hands its input back and the search goes on with the plain result.
 */
export async function rewriteQuery(ctx: AuthedCtx, query: string, requested: boolean): Promise<string> {
  if (!requested) return query;
  return (await rewriteSearchQuery(ctx.app, ctx.tenant.id, query)) ?? query;
}

export async function rerankCandidates(ctx: AuthedCtx, query: string, candidates: CandidateRow[], requested: boolean): Promise<CandidateRow[]> {
  if (!requested) return candidates;
  const order = await rerankWithLlm(ctx.app, ctx.tenant.id, query, candidates);
  if (!order) return candidates;
  const byId = new Map(candidates.map((c) => [c.id, c]));
  return order.map((id) => byId.get(id)!);
}

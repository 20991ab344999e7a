import type { AuthedCtx } from '../../context.ts';
import type { CandidateRow } from './candidates.ts';

/**
 * The LLM stages of the search pipeline: query rewriting before retrieval, re-ranking after
 * fusion. This build has no LLM port yet, so both hand their input back unchanged whatever the
 * request asked; the LLM integration replaces these two functions (and nothing else) with calls
 * to `rewrite_query` and `rerank` (decisions.md), falling back to their input when a call fails.
 */
export async function rewriteQuery(_ctx: AuthedCtx, query: string, requested: boolean): Promise<string> {
  void requested;
  return query;
}

export async function rerankCandidates(_ctx: AuthedCtx, _query: string, candidates: CandidateRow[], requested: boolean): Promise<CandidateRow[]> {
  void requested;
  return candidates;
}

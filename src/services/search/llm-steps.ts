import type { App } from '../../core/context.ts';
import { rerank, rewriteQuery } from '../llm/calls.ts';
import { resolveLlm, type TenantLlm } from '../llm/tenant-llm.ts';

/**
 * The LLM steps of search. Each is one call (asked once more on an invalid reply) and answers
 * null when there is no LLM, the spend cap withholds it, or it fails: the caller then goes on
 * with the plain query or the fused order, so a search never fails because of them.
 */
async function withLlm<T>(app: App, tenantId: string, step: string, fn: (llm: TenantLlm) => Promise<T>): Promise<T | null> {
  const { llm } = await resolveLlm(app, tenantId);
  if (!llm) return null;
  try {
    return await fn(llm);
  } catch (err) {
    app.log.warn({ err, step }, 'search LLM step failed; using the plain result');
    return null;
  }
}

/** `rewrite`: a retrieval-friendly version of the query, used for both the vector and the text side. */
export function rewriteSearchQuery(app: App, tenantId: string, query: string): Promise<string | null> {
  return withLlm(app, tenantId, 'rewrite', async (llm) => {
    const reply = await llm.call(rewriteQuery, query, { check: (r) => (r.query.trim() ? null : 'the rewritten query is empty') });
    return reply.query.trim();
  });
}

// Bounded input: the reranked head is at most a full page of results (limit <= 50), clipped texts.
const RERANK_MAX = 50;
const RERANK_TEXT_CHARS = 500;

/**
 * `rerank`: the candidates' ids, best first. The first RERANK_MAX candidates are reranked; any
 * the model leaves out, and any beyond the head, keep their fused order after the ranked ones.
 * Ids it made up make the reply invalid.
 */
export function rerankCandidates(app: App, tenantId: string, query: string, candidates: Array<{ id: string; text: string }>): Promise<string[] | null> {
  if (candidates.length < 2) return Promise.resolve(candidates.map((c) => c.id));
  return withLlm(app, tenantId, 'rerank', async (llm) => {
    const head = candidates.slice(0, RERANK_MAX).map((c) => ({ id: c.id, text: c.text.slice(0, RERANK_TEXT_CHARS) }));
    const known = new Set(head.map((c) => c.id));
    const reply = await llm.call(rerank, JSON.stringify({ query, candidates: head }), {
      check: (r) => {
        const unknown = r.ids.find((id) => !known.has(id));
        return unknown ? `id ${unknown} is not one of the candidates` : null;
      },
    });
    const ranked = [...new Set(reply.ids)];
    return [...ranked, ...candidates.map((c) => c.id).filter((id) => !ranked.includes(id))];
  });
}

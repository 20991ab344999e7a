import { z } from 'zod';
import type { AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest } from '../../core/errors.ts';
import { LlmUnavailableError, type CompletionRequest } from '../../ports/llm/llm.ts';
import { memoryText } from '../../schemas/fields.ts';
import { chatCompletion, type ProxyRequest } from '../../schemas/proxy.ts';
import { contextFields } from '../../schemas/context.ts';
import { buildContext, latestUserText } from '../context/context.ts';
import { rememberQueued } from '../graph/remember.ts';
import { resolveLlm, type TenantLlm } from '../llm/tenant-llm.ts';
import { DEFAULT_IMPORT_COLLECTION } from '../memory/import.ts';

/** Where a stored message goes: the named collection, else the default one, as for an import. */
export const storeCollection = (input: { collection?: string }) => input.collection ?? DEFAULT_IMPORT_COLLECTION;
const contextInput = z.object(contextFields);
const MAX_TEXT = memoryText.maxLength!;

/**
 * One chat completion through the tenant's LLM endpoint with its memory: the context block for
 * the latest user message (docs/context.md) as a system message first in the conversation, the
 * caller's request forwarded otherwise as it is, and, with `store`, that message queued for
 * remember once the endpoint has answered (a failed call stores nothing). Only a conversation
 * that ends with the user's message stores it: a tool-calling loop sends the same user message
 * again with each tool result.
 */
export async function chatCompletions(ctx: AuthedCtx, input: ProxyRequest) {
  const { collection, container_tag, memory_limit, memory_tokens, store, ...request } = input;
  if (request.stream) throw badRequest('stream: true is not supported: the proxy answers whole completions; send stream: false or leave it out');
  // invoke checked the grants (the procedure's rule): read on the named collection, write where
  // a message is stored. Without a name, recall keeps to the readable collections.
  const llm = await tenantLlm(ctx);

  const said = latestUserText(request.messages);
  const recalled = said && memory_limit ? await recall(ctx, said, { collection, container_tag, limit: memory_limit, max_tokens: memory_tokens }) : null;
  const messages = recalled?.context ? [{ role: 'system', content: recalled.context }, ...request.messages] : request.messages;
  const completion = await forward(llm, { ...request, messages });

  const stored = store && request.messages.at(-1)?.role === 'user' && !!said;
  if (stored) await rememberQueued(ctx, storeCollection(input), { content: said.slice(0, MAX_TEXT), importance: 0.5, container_tag });
  const used = recalled
    ? [
        ...recalled.stable.memories.map(({ id, text, collection }) => ({ id, text, score: null, collection })),
        ...recalled.query.memories.map(({ id, text, score, collection }) => ({ id, text, score, collection })),
      ]
    : [];
  return { ...completion, memvault: { memories_used: used, stored } };
}

async function tenantLlm(ctx: AuthedCtx): Promise<TenantLlm> {
  const resolved = await resolveLlm(ctx.app, ctx.tenant.id);
  if (resolved.llm) return resolved.llm;
  if (resolved.reason === 'spend_cap') {
    throw new AppError(
      'TOO_MANY_REQUESTS',
      "The monthly LLM spend cap is reached: raise it (PUT /v1/memory/spend-cap) or use the tenant's own endpoint (PUT /v1/memory/extraction/config)",
    );
  }
  throw new AppError(
    'SERVICE_UNAVAILABLE',
    'No LLM endpoint is configured for this tenant: set one with PUT /v1/memory/extraction/config (or the operator sets ORGMEM_LLM_BASE_URL)',
  );
}

/** The context for the message; a named collection that does not exist yet holds none. */
async function recall(ctx: AuthedCtx, query: string, opts: { collection?: string; container_tag: string | null; limit: number; max_tokens: number }) {
  const { collection, ...fields } = opts;
  try {
    return await buildContext(ctx, contextInput.parse({ query: query.slice(0, MAX_TEXT), ...fields }), collection ?? null);
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

/** The endpoint's answer; its failures as the gateway errors they are. */
async function forward(llm: TenantLlm, request: CompletionRequest) {
  let answer: unknown;
  try {
    answer = (await llm.complete(request)).completion;
  } catch (err) {
    if (!(err instanceof LlmUnavailableError)) throw err;
    if (err.timedOut) throw new AppError('GATEWAY_TIMEOUT', `The LLM endpoint did not answer in time: ${err.message}`);
    throw new AppError('BAD_GATEWAY', `The LLM endpoint failed: ${err.message}`);
  }
  const parsed = chatCompletion.safeParse(answer);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError('BAD_GATEWAY', `The LLM endpoint did not answer with a chat completion (${issue.path.join('.')}: ${issue.message})`);
  }
  return parsed.data;
}

import type { AuthedCtx } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { EventStream, sseFrame } from '../../core/event-stream.ts';
import { LlmUnavailableError, type CompletionRequest } from '../../ports/llm/llm.ts';
import { sseEvents } from '../../ports/llm/upstream.ts';
import { eventJson, relay, type RelayRules } from './relay.ts';
import { chatCompletion, type ProxyMessage, type ProxyRequest } from '../../schemas/proxy.ts';
import { threadBudget } from './settings.ts';
import { trimThread, type TurnRules } from './trim.ts';
import { latestUserText } from '../context/context.ts';
import { resolveLlm, type TenantLlm } from '../llm/tenant-llm.ts';
import { callUpstream, exchangeText, memvaultHeaders, memvaultOf, recallFor, roughTokens, storeTurn } from './turn.ts';

/**
 * One chat completion through the tenant's LLM endpoint with its memory: the context block for
 * the latest user message (docs/context.md) as a system message first in the conversation, the
 * caller's request forwarded otherwise as it is, and, with `store`, that message queued for
 * remember with the model's reply once the endpoint has answered (a failed call stores nothing),
 * so that extraction sees both (turn.ts, exchangeText). Only a conversation
 * that ends with the user's message stores it: a tool-calling loop sends the same user message
 * again with each tool result. With `stream`, the endpoint's chunks are relayed as they come
 * (streamChat).
 */
export async function chatCompletions(ctx: AuthedCtx, input: ProxyRequest) {
  const { collection, container_tag, memory_limit, memory_tokens, store, max_thread_tokens, ...request } = input;
  const memory = { collection, container_tag, memory_limit, memory_tokens, store };
  // invoke checked the grants (the procedure's rule): read on the named collection, write where
  // a message is stored. Without a name, recall keeps to the readable collections.
  const llm = await tenantLlm(ctx);

  const said = latestUserText(request.messages);
  const recalled = await recallFor(ctx, said, memory);
  const trimmed = trimThread(request.messages, await threadBudget(ctx, max_thread_tokens), chatTurns);
  const messages = recalled.context ? [{ role: 'system', content: recalled.context }, ...trimmed.messages] : trimmed.messages;
  const storeIt = store && request.messages.at(-1)?.role === 'user' && !!said;
  const storeNow = async (reply: string | null | undefined) => (storeIt ? storeTurn(ctx, memory, exchangeText(said, reply)) : notStored);
  if (request.stream) {
    return streamChat(ctx, llm, { ...request, messages }, storeNow, memvaultOf(recalled, { stored: storeIt, error: null }, trimmed.dropped));
  }

  const completion = await forward(llm, { ...request, messages });
  return { ...completion, memvault: memvaultOf(recalled, await storeNow(completion.choices[0]?.message.content), trimmed.dropped) };
}

const notStored = { stored: false, error: null };

/** Chat completions' turns: the leading system (or developer) messages kept, a turn starting at each user message. */
const chatTurns: TurnRules<ProxyMessage> = {
  fixed: (m) => m.role === 'system' || m.role === 'developer',
  startsTurn: (m) => m.role === 'user',
  pinned: () => false,
};

/** The tenant's OpenAI-compatible endpoint (chat completions and Responses); none: 503, over the spend cap: 429. */
export async function tenantLlm(ctx: AuthedCtx): Promise<TenantLlm> {
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

interface Chunk {
  model?: string;
  choices?: Array<{ delta?: { content?: string | null } }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: unknown;
}

/**
 * A streamed completion: the endpoint is asked with `stream_options.include_usage` (so that the
 * usage is always recorded) and its `chat.completion.chunk` events are relayed as they come; the
 * usage chunk and the chunks' `usage: null` reach the client only when it asked for them itself.
 * The user's turn is stored when the stream is over, however it ended: with the reply gathered
 * from the deltas when it came whole (to data: [DONE]), alone when it broke off (relayed as an
 * `{error}` event, as OpenAI's own streams do) or the client left, once either way. So the
 * X-Memvault-Stored header, sent before the first chunk, says the turn is to be stored. A client
 * that leaves aborts the upstream request.
 */
async function streamChat(
  ctx: AuthedCtx,
  llm: TenantLlm,
  request: CompletionRequest,
  store: (reply: string | null) => Promise<unknown>,
  memvault: ReturnType<typeof memvaultOf>,
): Promise<EventStream> {
  const started = performance.now();
  const wanted = (request.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const body = { ...request, model: request.model ?? llm.model, stream: true, stream_options: { ...(request.stream_options as object), include_usage: true } };
  const abort = new AbortController();
  const res = await callUpstream(ctx, llm.upstream, '/chat/completions', body, 'The LLM endpoint', abort.signal);
  const events = sseEvents(res);

  let usage: Chunk['usage'] = null;
  let model = body.model;
  let text = '';
  let complete = false;
  const rules: RelayRules = {
    frame(event) {
      if (event.data === '[DONE]') {
        complete = true;
        return { out: sseFrame('[DONE]'), done: true };
      }
      const chunk = eventJson<Chunk>(event);
      // The endpoint's own mid-stream error ends the stream, as it does for OpenAI's clients.
      if (chunk.error) return { out: sseFrame(event.data), stop: true };
      if (chunk.usage) usage = chunk.usage;
      if (chunk.model) model = chunk.model;
      text += chunk.choices?.[0]?.delta?.content ?? '';
      if (wanted) return { out: sseFrame(event.data) };
      if (!chunk.choices?.length) return { out: null };
      delete chunk.usage;
      return { out: sseFrame(JSON.stringify(chunk)) };
    },
    failure: (message) => sseFrame(JSON.stringify({ error: { message, type: 'server_error', code: null, param: null } })),
    async finish() {
      // The turn is stored whatever happened to the stream; with the reply only when it came whole.
      await store(complete ? text : null);
      await llm.recordStreamed({
        model,
        promptTokens: usage?.prompt_tokens ?? 0,
        completionTokens: usage?.completion_tokens ?? roughTokens(text),
        latencyMs: performance.now() - started,
      });
    },
  };
  return new EventStream(memvaultHeaders(memvault), relay(ctx, events, abort.signal, rules), () => abort.abort());
}

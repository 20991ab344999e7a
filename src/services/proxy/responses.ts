import type { AuthedCtx } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { EventStream, sseFrame } from '../../core/event-stream.ts';
import { sseEvents, upstreamJson, UpstreamError } from '../../ports/llm/upstream.ts';
import { responseObject, type ResponsesRequest } from '../../schemas/proxy-responses.ts';
import { tenantLlm } from './chat-completions.ts';
import { eventJson, relay, type RelayRules } from './relay.ts';
import { threadBudget } from './settings.ts';
import { tokensOf, trimThread, type TurnRules } from './trim.ts';
import { callUpstream, exchangeText, gatewayError, memvaultHeaders, memvaultOf, recallFor, roughTokens, storeTurn } from './turn.ts';

/*
 * OpenAI's Responses API with memory (docs/proxy.md, "OpenAI Responses"), for Codex and any
 * OpenAI SDK: the context block goes in as a developer message before the new input, and the
 * request otherwise goes to the tenant's endpoint as it came. A request that continues a thread
 * (previous_response_id) sends only its new items: the proxy keeps, for every response it relays,
 * the thread it belongs to and the words of the user it answered (proxy_threads), and recalls
 * from the new words plus the thread's latest ones.
 */

const WHAT = 'The LLM endpoint';
/** Earlier words of the user in the thread that join the new ones in the recall query. */
const THREAD_TURNS = 3;
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

type Item = Record<string, unknown> & { type?: unknown; role?: unknown; content?: unknown };

/** The words of the user in the new input: the text, or the last user message item's text parts. */
export function newUserText(input: ResponsesRequest['input']): string {
  if (typeof input === 'string') return input.trim();
  const last = [...(input as Item[])].reverse().find((i) => i.role === 'user' && (i.type === undefined || i.type === 'message'));
  if (typeof last?.content === 'string') return last.content.trim();
  const parts = Array.isArray(last?.content) ? (last.content as Item[]) : [];
  return parts
    .flatMap((p) => ((p.type === 'input_text' || p.type === 'text') && typeof p.text === 'string' ? [p.text] : []))
    .join('\n')
    .trim();
}

const isMessage = (i: Item) => i.type === undefined || i.type === 'message';
/**
 * Responses' turns: the leading system and developer messages kept (`instructions`, beside the
 * items, is counted and kept), a turn starting at each user message; function calls and their
 * outputs are items of the turn between (docs/proxy.md, "Long threads").
 */
const responsesTurns: TurnRules<Item> = {
  fixed: (i) => isMessage(i) && (i.role === 'system' || i.role === 'developer'),
  startsTurn: (i) => isMessage(i) && i.role === 'user',
  pinned: () => false,
};

async function threadOf(ctx: AuthedCtx, previous: string | null | undefined) {
  if (!previous) return { threadId: null, earlier: [] as string[] };
  const rows = await ctx.app.db.query<{ thread_id: string; said: string }>(
    `select t.thread_id, t.said from proxy_threads p join proxy_threads t on t.tenant_id = p.tenant_id and t.thread_id = p.thread_id
      where p.tenant_id = $1 and p.response_id = $2 and t.said <> '' order by t.created_at desc limit $3`,
    [ctx.tenant.id, previous, THREAD_TURNS],
  );
  // A response the proxy did not relay (or one of another tenant) starts a thread of its own here.
  return { threadId: rows[0]?.thread_id ?? null, earlier: rows.map((r) => r.said) };
}

async function linkResponse(ctx: AuthedCtx, responseId: string, threadId: string | null, said: string) {
  await ctx.app.db.query(
    'insert into proxy_threads (tenant_id, response_id, thread_id, said) values ($1, $2, $3, $4) on conflict (tenant_id, response_id) do nothing',
    [ctx.tenant.id, responseId, threadId ?? responseId, said],
  );
}

export async function responses(ctx: AuthedCtx, input: ResponsesRequest) {
  const { collection, container_tag, memory_limit, memory_tokens, store, max_thread_tokens, ...request } = input;
  const memory = { collection, container_tag, memory_limit, memory_tokens, store };
  const llm = await tenantLlm(ctx);
  const said = newUserText(request.input);
  const thread = await threadOf(ctx, request.previous_response_id);
  const query = [said, ...thread.earlier].filter(Boolean).join('\n');
  const recalled = await recallFor(ctx, query, memory);
  const trimmed =
    typeof request.input === 'string'
      ? { messages: null, dropped: 0 }
      : trimThread(request.input as Item[], await threadBudget(ctx, max_thread_tokens), responsesTurns, tokensOf(request.instructions ?? ''));
  const sent = trimmed.messages ?? request.input;
  const items = typeof sent === 'string' ? [{ role: 'user', content: sent }] : sent;
  const body = {
    ...request,
    // The Responses API has a `store` of its own (the upstream keeps the response): it gets orgmem's, the same word meaning the same wish.
    store,
    model: request.model ?? llm.model,
    input: recalled.context ? [{ role: 'developer', content: recalled.context }, ...items] : sent,
  };
  const storeIt = store && said !== '';
  // With the model's reply, as chat completions store it (turn.ts, exchangeText).
  const storeNow = (reply: string | null) => (storeIt ? storeTurn(ctx, memory, exchangeText(said, reply)) : Promise.resolve({ stored: false, error: null }));
  const started = performance.now();
  const record = (model: string, usage: { input_tokens?: number; output_tokens?: number } | null | undefined, text = '') =>
    llm.recordStreamed({
      model,
      promptTokens: usage?.input_tokens ?? 0,
      completionTokens: usage?.output_tokens ?? roughTokens(text),
      latencyMs: performance.now() - started,
    });

  const abort = new AbortController();
  const res = await callUpstream(ctx, llm.upstream, '/responses', body, WHAT, abort.signal);
  if (request.stream) {
    const events = sseEvents(res);
    let responseId: string | null = null;
    let model = body.model;
    let usage: { input_tokens?: number; output_tokens?: number } | null = null;
    let text = '';
    let complete = false;
    const rules: RelayRules = {
      frame(event) {
        const data = eventJson<{ type?: string; response?: { id?: string; model?: string; usage?: typeof usage }; delta?: unknown }>(event);
        if (data.type === 'response.created') responseId = data.response?.id ?? null;
        if (data.response?.model) model = data.response.model;
        if (data.response?.usage) usage = data.response.usage;
        if (data.type === 'response.output_text.delta' && typeof data.delta === 'string') text += data.delta;
        complete = data.type === 'response.completed';
        return { out: sseFrame(event.data, event.event ?? data.type), done: TERMINAL.has(data.type ?? ''), stop: data.type === 'error' };
      },
      failure: (message) => sseFrame(JSON.stringify({ type: 'error', code: 'server_error', message, param: null }), 'error'),
      // The turn is stored once the stream is over, however it ended: with the reply only when the response completed.
      async finish() {
        await storeNow(complete ? text : null);
        await record(model, usage, text);
        if (responseId) await linkResponse(ctx, responseId, thread.threadId, said);
      },
    };
    return new EventStream(
      memvaultHeaders(memvaultOf(recalled, { stored: storeIt, error: null }, trimmed.dropped)),
      relay(ctx, events, abort.signal, rules),
      () => abort.abort(),
    );
  }
  const answer = responseObject.safeParse(await upstreamJson(res).catch((err: UpstreamError) => Promise.reject(gatewayError(err, WHAT))));
  if (!answer.success) throw new AppError('BAD_GATEWAY', `${WHAT} did not answer with a response (${answer.error.issues[0]!.path.join('.')})`);
  await record((answer.data.model as string | undefined) ?? body.model, answer.data.usage);
  await linkResponse(ctx, answer.data.id, thread.threadId, said);
  return { ...answer.data, memvault: memvaultOf(recalled, await storeNow(outputText(answer.data.output)), trimmed.dropped) };
}

/** The words of a response: the output_text parts of its message items (reasoning and function calls are not said to the user). */
function outputText(output: unknown): string {
  const items = Array.isArray(output) ? (output as Item[]) : [];
  return items
    .filter((i) => i.type === 'message')
    .flatMap((i) => (Array.isArray(i.content) ? (i.content as Item[]) : []))
    .flatMap((p) => (p.type === 'output_text' && typeof p.text === 'string' ? [p.text] : []))
    .join('\n');
}

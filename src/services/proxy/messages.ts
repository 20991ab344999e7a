import type { AuthedCtx } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { EventStream, sseFrame } from '../../core/event-stream.ts';
import { sseEvents, upstreamJson, UpstreamError, type Upstream } from '../../ports/llm/upstream.ts';
import { anthropicAnswer, type AnthropicMessage, type MessagesRequest } from '../../schemas/proxy-messages.ts';
import { isOverSpendCap } from '../llm/spend-cap.ts';
import { recordUsage } from '../llm/usage.ts';
import { eventJson, relay, type RelayRules } from './relay.ts';
import { threadBudget } from './settings.ts';
import { tokensOf, trimThread, type TurnRules } from './trim.ts';
import { callUpstream, exchangeText, gatewayError, memvaultHeaders, memvaultOf, recallFor, storeTurn, type Recall } from './turn.ts';

/*
 * Anthropic's Messages API with memory (docs/proxy.md, "Anthropic Messages"), for Claude Code
 * and any Anthropic client pointed at /v1/proxy. The request goes to the operator's Anthropic
 * upstream as it came, but for one text block of recalled memory at the very end of the last
 * user message: after every cache_control breakpoint the client set, so the prompt cache the
 * client built keeps working, and no block of the client's is moved, changed or dropped.
 */

const DEFAULT_VERSION = '2023-06-01';
const WHAT = 'The Anthropic upstream';
/** Claude Code's own reminders inside user messages: context it adds, not what the user said. */
const REMINDER = /^\s*<system-reminder>/;
/** The instruction of a compaction request (Claude Code summarising the conversation so far). */
const COMPACTION = /create a detailed summary of the conversation/i;
const CLAUDE_CODE = /\bClaude Code\b/;

type Request = Pick<MessagesRequest, 'model' | 'messages' | 'max_tokens' | 'system' | 'tools' | 'stream'> & Record<string, unknown>;

/** The operator's Anthropic upstream, with the client's protocol headers; none configured: 503, over the spend cap: 429. */
async function anthropicUpstream(ctx: AuthedCtx, version?: string, beta?: string): Promise<Upstream> {
  const config = ctx.app.config.llm.anthropic;
  if (!config) throw new AppError('SERVICE_UNAVAILABLE', 'No Anthropic upstream is configured on this server (the operator sets ORGMEM_ANTHROPIC_BASE_URL)');
  if (await isOverSpendCap(ctx.app, ctx.tenant.id)) {
    throw new AppError('TOO_MANY_REQUESTS', 'The monthly LLM spend cap is reached: raise it (PUT /v1/memory/spend-cap)');
  }
  return {
    baseUrl: config.baseUrl,
    headers: { 'x-api-key': config.apiKey, 'anthropic-version': version ?? DEFAULT_VERSION, ...(beta && { 'anthropic-beta': beta }) },
  };
}

const systemText = (system: Request['system']) =>
  typeof system === 'string' ? system : (system ?? []).map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n');

/** What the user wrote in a message: its text blocks but Claude Code's reminders (tool results, images... are not words of the user). */
export function userText(message: AnthropicMessage | undefined): string {
  if (!message || message.role !== 'user') return '';
  if (typeof message.content === 'string') return message.content.trim();
  const texts = message.content.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' && !REMINDER.test(b.text) ? [b.text] : []));
  return texts.join('\n').trim();
}

/**
 * A request that is not a turn of the main conversation, passed through untouched (no memory in,
 * nothing stored): a compaction request (its last user message asks for a summary of the
 * conversation), and Claude Code's side queries (its system prompt, no tools: titles, topic
 * checks) and its one-token probes (max_tokens 1).
 */
export function isSideRequest(request: Request): boolean {
  if (request.max_tokens <= 1) return true;
  if (COMPACTION.test(userText(request.messages.at(-1)))) return true;
  return CLAUDE_CODE.test(systemText(request.system)) && !request.tools?.length;
}

/** The messages with the memory block appended to the last user message (after all its blocks, so after every breakpoint). */
function withMemory(messages: AnthropicMessage[], context: string): AnthropicMessage[] {
  const at = messages.map((m) => m.role).lastIndexOf('user');
  if (at < 0) return messages;
  const target = messages[at]!;
  const blocks = typeof target.content === 'string' ? [{ type: 'text', text: target.content }] : target.content;
  const copy = [...messages];
  copy[at] = { ...target, content: [...blocks, { type: 'text', text: context }] };
  return copy;
}

/**
 * Messages' turns: the `system` field is beside them (counted, kept); a turn starts at a user
 * message with words of its own (one of tool results only continues the turn of its tool calls);
 * a block with cache_control pins its turn (docs/proxy.md, "Long threads").
 */
const anthropicTurns: TurnRules<AnthropicMessage> = {
  fixed: () => false,
  startsTurn: (m) => m.role === 'user' && (typeof m.content === 'string' || m.content.some((b) => b.type !== 'tool_result')),
  pinned: (m) => typeof m.content !== 'string' && m.content.some((b) => b.cache_control !== undefined),
};

const nothing: Recall = { context: null, used: [], error: null };
const notStored = { stored: false, error: null };

export async function messages(ctx: AuthedCtx, input: MessagesRequest) {
  const { collection, container_tag, memory_limit, memory_tokens, store, max_thread_tokens, anthropic_version, anthropic_beta, ...request } = input;
  const memory = { collection, container_tag, memory_limit, memory_tokens, store };
  const upstream = await anthropicUpstream(ctx, anthropic_version, anthropic_beta);
  const side = isSideRequest(request);
  const said = side ? '' : (request.messages.map(userText).filter(Boolean).at(-1) ?? '');
  const recalled = side ? nothing : await recallFor(ctx, said, memory);
  // A side request (a compaction above all) goes as it came, untrimmed.
  const trimmed = side
    ? { messages: request.messages, dropped: 0 }
    : trimThread(request.messages, await threadBudget(ctx, max_thread_tokens), anthropicTurns, tokensOf(request.system ?? ''));
  const sent = trimmed.dropped ? { ...request, messages: trimmed.messages } : request;
  const body = recalled.context ? { ...sent, messages: withMemory(sent.messages, recalled.context) } : sent;
  // As for chat completions: only a conversation ending with words of the user stores them (a tool loop stores nothing again).
  const storeIt = !side && store && userText(request.messages.at(-1)) !== '';
  // With the model's reply, as chat completions store it (turn.ts, exchangeText): its text blocks, not its thinking or tool calls.
  const storeNow = (reply: string | null) => (storeIt ? storeTurn(ctx, memory, exchangeText(said, reply)) : Promise.resolve(notStored));
  const started = performance.now();
  const record = (model: string, usage: Usage | undefined) =>
    recordUsage(
      ctx.app,
      ctx.tenant.id,
      'server',
      'chat_proxy',
      { baseUrl: upstream.baseUrl, model, apiKey: '' },
      {
        model,
        promptTokens: (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + (usage?.cache_read_input_tokens ?? 0),
        completionTokens: usage?.output_tokens ?? 0,
        latencyMs: performance.now() - started,
      },
    );

  const abort = new AbortController();
  const res = await callUpstream(ctx, upstream, '/v1/messages', body, WHAT, abort.signal);
  if (request.stream) {
    const events = sseEvents(res);
    // Stored when the stream is over (X-Memvault-Stored says it is to be), with the reply only when it came whole.
    return new EventStream(
      memvaultHeaders(memvaultOf(recalled, { stored: storeIt, error: null }, trimmed.dropped)),
      relay(ctx, events, abort.signal, streamRules(request.model, record, storeNow)),
      () => abort.abort(),
    );
  }
  const answer = anthropicAnswer.safeParse(await upstreamJson(res).catch((err: UpstreamError) => Promise.reject(gatewayError(err, WHAT))));
  if (!answer.success) throw new AppError('BAD_GATEWAY', `${WHAT} did not answer with a message (${answer.error.issues[0]!.path.join('.')})`);
  await record(answer.data.model ?? request.model, answer.data.usage as Usage | undefined);
  return { ...answer.data, memvault: memvaultOf(recalled, await storeNow(replyText(answer.data.content)), trimmed.dropped) };
}

/** The words of a reply: its text blocks (thinking, tool calls and the rest are not said to the user). */
const replyText = (content: Array<{ type?: unknown; text?: unknown }>) =>
  content.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : [])).join('\n');

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/**
 * Every event relayed as it came, its name and data unchanged (message_start, content_block_*,
 * ping, message_delta, message_stop, error); the usage read from message_start and message_delta,
 * the reply from the text deltas. The turn is stored once the stream is over, however it ended: with
 * the reply when it came whole (to message_stop), alone when it broke off or the client left.
 */
function streamRules(
  model: string,
  record: (model: string, usage: Usage | undefined) => Promise<void>,
  store: (reply: string | null) => Promise<unknown>,
): RelayRules {
  let usage: Usage = {};
  let text = '';
  let complete = false;
  return {
    frame(event) {
      const data = eventJson<{ type?: string; message?: { model?: string; usage?: Usage }; usage?: Usage; delta?: { type?: string; text?: unknown } }>(event);
      if (data.type === 'message_start') {
        model = data.message?.model ?? model;
        usage = { ...data.message?.usage };
      }
      if (data.type === 'message_delta') usage = { ...usage, ...data.usage };
      if (data.type === 'content_block_delta' && data.delta?.type === 'text_delta' && typeof data.delta.text === 'string') text += data.delta.text;
      complete = data.type === 'message_stop';
      const out = sseFrame(event.data, event.event ?? data.type);
      return { out, done: complete, stop: data.type === 'error' };
    },
    failure: (message) => sseFrame(JSON.stringify({ type: 'error', error: { type: 'api_error', message } }), 'error'),
    async finish() {
      await store(complete ? text : null);
      await record(model, usage);
    },
  };
}

/** count_tokens, passed through as it came (it counts what the client sends; no memory is added). */
export async function passCountTokens(ctx: AuthedCtx, input: { anthropic_version?: string; anthropic_beta?: string } & Record<string, unknown>) {
  const { anthropic_version, anthropic_beta, ...request } = input;
  const upstream = await anthropicUpstream(ctx, anthropic_version, anthropic_beta);
  const res = await callUpstream(ctx, upstream, '/v1/messages/count_tokens', request, WHAT, new AbortController().signal);
  return (await upstreamJson(res).catch((err: UpstreamError) => Promise.reject(gatewayError(err, WHAT)))) as { input_tokens: number };
}

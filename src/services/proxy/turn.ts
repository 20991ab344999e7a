import { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { newId } from '../../core/ids.ts';
import { AppError } from '../../core/errors.ts';
import { postUpstream, UpstreamError, type Upstream } from '../../ports/llm/upstream.ts';
import { contextFields } from '../../schemas/context.ts';
import { memoryText } from '../../schemas/fields.ts';
import { buildContext } from '../context/context.ts';
import { rememberQueued } from '../graph/remember.ts';
import { DEFAULT_IMPORT_COLLECTION } from '../memory/import.ts';

/*
 * What every proxy surface (chat completions, Messages, Responses) does around the model call:
 * recall the context block for the latest user turn, store that turn, and say what it did. Only
 * orgmem's own part may fail quietly: a recall or a store that fails is reported (memvault's
 * `memory_error`, the X-Memvault-Memory-Error header) and the chat goes on without it, so that a
 * memory outage never breaks the conversation (docs/proxy.md, "When memory fails").
 */

/** Where a stored message goes: the named collection, else the default one, as for an import. */
export const storeCollection = (input: { collection?: string }) => input.collection ?? DEFAULT_IMPORT_COLLECTION;
const contextInput = z.object(contextFields);
const MAX_TEXT = memoryText.maxLength!;

export interface MemoryOptions {
  collection?: string;
  container_tag: string | null;
  memory_limit: number;
  memory_tokens: number;
  store: boolean;
}

export interface MemoryUsed {
  id: string;
  text: string;
  score: number | null;
  collection: string;
}

export interface Recall {
  /** The context block to hand the model, or null for none. */
  context: string | null;
  used: MemoryUsed[];
  /** Why orgmem's part failed, or null. */
  error: string | null;
}

/** The context for the user's latest text (docs/context.md); a named collection that does not exist yet holds none. */
export async function recallFor(ctx: AuthedCtx, said: string, opts: MemoryOptions): Promise<Recall> {
  if (!said || !opts.memory_limit) return { context: null, used: [], error: null };
  const fields = { query: said.slice(0, MAX_TEXT), container_tag: opts.container_tag, limit: opts.memory_limit, max_tokens: opts.memory_tokens };
  try {
    const built = await buildContext(ctx, contextInput.parse(fields), opts.collection ?? null);
    const used = [
      ...built.stable.memories.map(({ id, text, collection }) => ({ id, text, score: null, collection })),
      ...built.query.memories.map(({ id, text, score, collection }) => ({ id, text, score, collection })),
    ];
    return { context: built.context || null, used, error: null };
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return { context: null, used: [], error: null };
    ctx.app.log.warn({ err, requestId: ctx.requestId }, 'proxy recall failed; the chat goes on without memory');
    return { context: null, used: [], error: `recall failed (request ${ctx.requestId})` };
  }
}

/**
 * The text remember gets for a turn: the user's words with the model's reply after them, so that
 * extraction sees both (what the user said, and what they were told); without a reply (a stream
 * that broke off, a reply of tool calls only), the user's words alone.
 */
export const exchangeText = (said: string, reply: string | null | undefined) => (reply?.trim() ? `User: ${said}\n\nAssistant: ${reply.trim()}` : said);

/**
 * Queues the user's turn for remember; a failure is reported, not thrown (the model has answered or
 * is answering), and recorded where the tenant's failed background work is counted (pipeline
 * health): at the end of a stream, the answer's headers are long sent and cannot say so.
 */
export async function storeTurn(ctx: AuthedCtx, opts: MemoryOptions, said: string): Promise<{ stored: boolean; error: string | null }> {
  const collection = storeCollection(opts);
  try {
    await rememberQueued(ctx, collection, { content: said.slice(0, MAX_TEXT), importance: 0.5, container_tag: opts.container_tag });
    return { stored: true, error: null };
  } catch (err) {
    ctx.app.log.warn({ err, requestId: ctx.requestId }, 'proxy store failed');
    const error = `storing the message failed (request ${ctx.requestId})`;
    await ctx.app.db
      .query('insert into proxy_store_failures (tenant_id, id, collection, request_id, error) values ($1, $2, $3, $4, $5)', [
        ctx.tenant.id,
        newId(),
        collection,
        ctx.requestId,
        error,
      ])
      .catch((recordErr: unknown) => ctx.app.log.error({ err: recordErr, requestId: ctx.requestId }, 'a failed proxy store could not be recorded'));
    return { stored: false, error };
  }
}

/** How long a failed proxy store stays counted in pipeline health. */
export const PROXY_FAILURE_KEPT_DAYS = 7;

/** Drops the failed proxy stores of `data` (a data database) older than PROXY_FAILURE_KEPT_DAYS: the hourly writes sweep. */
export async function dropOldProxyFailures(data: App): Promise<number> {
  const rows = await data.db.query(`delete from proxy_store_failures where created_at < now() - make_interval(days => $1) returning id`, [
    PROXY_FAILURE_KEPT_DAYS,
  ]);
  return rows.length;
}

/** memvault for an answer: what was recalled, whether the turn was stored, the turns trimmed away, and what failed of orgmem's part. */
export const memvaultOf = (recall: Recall, stored: { stored: boolean; error: string | null }, dropped: number) => ({
  memories_used: recall.used,
  stored: stored.stored,
  turns_dropped: dropped,
  memory_error: [recall.error, stored.error].filter(Boolean).join('; ') || null,
});

/**
 * memvault as the headers of a streamed answer, which are sent before the first event: the
 * memories' ids, scores and collections as JSON (their texts are the client's to read with
 * GET .../memories/{id}; a header holds no line breaks and is best kept short), whether the turn
 * was stored, and the failure, if any.
 */
export function memvaultHeaders(memvault: ReturnType<typeof memvaultOf>): Record<string, string> {
  const used = memvault.memories_used.map(({ id, score, collection }) => ({ id, score, collection }));
  return {
    'x-memvault-memories': JSON.stringify(used),
    'x-memvault-stored': String(memvault.stored),
    'x-memvault-turns-dropped': String(memvault.turns_dropped),
    ...(memvault.memory_error && { 'x-memvault-memory-error': memvault.memory_error }),
  };
}

/** An upstream failure as the gateway error it is: a timeout 504, anything else 502, with the reason. */
export function gatewayError(err: UpstreamError, what: string): AppError {
  if (err.timedOut) return new AppError('GATEWAY_TIMEOUT', `${what} did not answer in time: ${err.message}`);
  return new AppError('BAD_GATEWAY', `${what} failed: ${err.message}`);
}

/**
 * The caller's request sent to the upstream within the LLM timeout; an upstream that fails or does
 * not answer in time is the gateway's 502 or 504 naming `what`.
 */
export async function callUpstream(ctx: AuthedCtx, upstream: Upstream, path: string, body: unknown, what: string, signal: AbortSignal): Promise<Response> {
  try {
    return await postUpstream(upstream, path, body, { signal, timeoutMs: ctx.app.config.llm.timeoutMs });
  } catch (err) {
    if (err instanceof UpstreamError) throw gatewayError(err, what);
    throw err;
  }
}

/** Rough tokens of a streamed text whose upstream reported no usage: four characters a token. */
export const roughTokens = (text: string) => Math.ceil(text.length / 4);

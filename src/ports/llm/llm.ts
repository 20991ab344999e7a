import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, toFile } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { outboundFetch, type OutboundFetch } from '../outbound-http.ts';
import { checkTargetUrl, PrivateTargetError, type TargetRule } from '../public-target.ts';

/** An OpenAI-compatible chat endpoint: a tenant's own, the server override, or the platform default. */
export interface LlmEndpoint {
  baseUrl: string;
  model: string;
  /** Empty for endpoints that take no key (a local model server). */
  apiKey: string;
  /** A tenant's own endpoint: reached only as this rule allows (the operator's endpoints have none). */
  targets?: TargetRule;
}

/** A part of a user message: text, or an image sent inline as a `data:` URL. */
export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export type ChatMessage = { role: 'system'; content: string } | { role: 'user'; content: string | ContentPart[] };

export interface ChatRequest {
  messages: ChatMessage[];
  /** Structured output: the reply's content must be JSON valid against this schema (strict mode). */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  maxTokens?: number;
}

/** What one call used, as recorded for usage and the spend cap. */
export interface LlmUsage {
  model: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
}

export interface ChatReply extends LlmUsage {
  content: string;
}

/**
 * A chat completion request as a caller wrote it (the chat proxy): OpenAI's fields, including
 * ones this service does not know, sent on as they are.
 */
export type CompletionRequest = Record<string, unknown> & { messages: unknown[]; model?: string };

/** The endpoint's answer to a completion request, whole, and what it used. */
export interface CompletionReply extends LlmUsage {
  completion: ChatCompletion;
}

/** An audio or video file to transcribe; `model` defaults to the endpoint's. */
export interface TranscriptionRequest {
  data: Buffer;
  filename: string;
  mime: string;
  model?: string;
}

export interface TranscriptionReply extends LlmUsage {
  text: string;
}

export interface ChatOptions {
  timeoutMs: number;
  /** Retries of failed connections, timeouts, 408/409/429 and 5xx answers, with exponential backoff. */
  maxRetries: number;
}

/** The endpoint could not be used: network failure, timeout or an error status, after retries. */
export class LlmUnavailableError extends Error {
  /** The endpoint did not answer within the timeout, rather than failing or refusing. */
  get timedOut(): boolean {
    return this.cause instanceof APIConnectionTimeoutError;
  }
}

/** One call of ours (see complete) and the text it answered. */
export async function chat(endpoint: LlmEndpoint, req: ChatRequest, opts: ChatOptions): Promise<ChatReply> {
  const { completion, ...usage } = await complete(
    endpoint,
    {
      messages: req.messages,
      ...(req.maxTokens !== undefined && { max_tokens: req.maxTokens }),
      ...(req.jsonSchema && {
        response_format: { type: 'json_schema', json_schema: { name: req.jsonSchema.name, strict: true, schema: req.jsonSchema.schema } },
      }),
    },
    opts,
  );
  return { content: completion.choices[0]?.message?.content ?? '', ...usage };
}

/**
 * One non-streaming `POST {base_url}/chat/completions` of `req` as it is (its `model` defaults to
 * the endpoint's) through the official client, which does the timeout and the retries (0.5 s
 * doubling up to 8 s, or what `retry-after` asks for).
 */
export async function complete(endpoint: LlmEndpoint, req: CompletionRequest, opts: ChatOptions): Promise<CompletionReply> {
  const started = performance.now();
  const body = { ...req, model: req.model ?? endpoint.model } as ChatCompletionCreateParamsNonStreaming;
  const call = client(endpoint, opts);
  try {
    await checkEndpoint(endpoint);
    const completion = await call.openai.chat.completions.create(body, { signal: call.signal });
    if (!Array.isArray(completion?.choices)) throw new Error('The endpoint did not answer with a chat completion');
    return {
      completion,
      model: completion.model || body.model,
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
      latencyMs: performance.now() - started,
    };
  } catch (err) {
    throw call.unavailable(err);
  }
}

/**
 * One `POST {base_url}/audio/transcriptions` (multipart `file` and `model`). Models billed by
 * token report their tokens; those billed by duration (whisper-1) report none, so they cost 0.
 */
export async function transcribe(endpoint: LlmEndpoint, req: TranscriptionRequest, opts: ChatOptions): Promise<TranscriptionReply> {
  const model = req.model ?? endpoint.model;
  const started = performance.now();
  const call = client(endpoint, opts);
  try {
    await checkEndpoint(endpoint);
    const result = await call.openai.audio.transcriptions.create(
      {
        file: await toFile(req.data, req.filename, { type: req.mime }),
        model,
      },
      { signal: call.signal },
    );
    if (typeof result?.text !== 'string') throw new Error('The endpoint did not answer with a transcription');
    const tokens = result.usage?.type === 'tokens' ? result.usage : null;
    return {
      text: result.text,
      model,
      promptTokens: tokens?.input_tokens ?? 0,
      completionTokens: tokens?.output_tokens ?? 0,
      latencyMs: performance.now() - started,
    };
  } catch (err) {
    throw call.unavailable(err);
  }
}

/**
 * A refused endpoint fails at once, without the client's retries; a name that resolves to a refused
 * address only when connecting is refused there (outboundFetch).
 */
async function checkEndpoint(endpoint: LlmEndpoint): Promise<void> {
  if (endpoint.targets) await checkTargetUrl(endpoint.targets, new URL(endpoint.baseUrl));
}

/**
 * The official client for one call. Its fetch is the checked one for a tenant's endpoint; a target
 * refused when connecting (the name moved to an internal address after it was saved) aborts the
 * call, so the client does not retry it as if the network had failed, and the refusal is the
 * reason given (`unavailable`).
 */
function client(endpoint: LlmEndpoint, opts: ChatOptions) {
  const abort = new AbortController();
  const checked = endpoint.targets && outboundFetch(endpoint.targets);
  const fetch: OutboundFetch | undefined =
    checked &&
    (async (url, init) => {
      try {
        return await checked(url, init);
      } catch (err) {
        if (err instanceof PrivateTargetError) abort.abort(err);
        throw err;
      }
    });
  const openai = new OpenAI({
    baseURL: endpoint.baseUrl,
    ...(fetch && { fetch }),
    // The client refuses an empty key; keyless local servers ignore whatever is sent.
    apiKey: endpoint.apiKey || 'none',
    timeout: opts.timeoutMs,
    maxRetries: opts.maxRetries,
  });
  const unavailable = (err: unknown) => {
    const cause = abort.signal.reason instanceof PrivateTargetError ? abort.signal.reason : err;
    return new LlmUnavailableError(describe(cause), { cause });
  };
  return { openai, signal: abort.signal, unavailable };
}

/**
 * A reason a person can act on: the status and the endpoint's message when it answered an
 * OpenAI-style error (never the body of anything else), or the network error.
 */
function describe(err: unknown): string {
  if (err instanceof APIError && err.status) {
    if (err.status >= 300 && err.status < 400) return `${err.status}, a redirect, which is not followed`;
    const message = (err.error as { message?: unknown } | undefined)?.message;
    return typeof message === 'string' ? `${err.status} ${message.slice(0, 300)}` : `${err.status}, not an OpenAI-compatible error answer`;
  }
  if (err instanceof APIConnectionError) {
    // fetch wraps the system error (ECONNREFUSED, ENOTFOUND...) one or two causes down.
    let cause = err.cause as { code?: string; message?: string; cause?: unknown } | undefined;
    while (cause && !cause.code && cause.cause) cause = cause.cause as typeof cause;
    const detail = cause?.code ?? cause?.message;
    return detail ? `${err.message} (${detail})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

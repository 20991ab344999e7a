import OpenAI, { APIConnectionError, APIError } from 'openai';

/** An OpenAI-compatible chat endpoint: a tenant's own, the server override, or the platform default. */
export interface LlmEndpoint {
  baseUrl: string;
  model: string;
  /** Empty for endpoints that take no key (a local model server). */
  apiKey: string;
}

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Structured output: the reply's content must be JSON valid against this schema (strict mode). */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  maxTokens?: number;
}

export interface ChatReply {
  content: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
}

export interface ChatOptions {
  timeoutMs: number;
  /** Retries of failed connections, timeouts, 408/409/429 and 5xx answers, with exponential backoff. */
  maxRetries: number;
}

/** The endpoint could not be used: network failure, timeout or an error status, after retries. */
export class LlmUnavailableError extends Error {}

/**
 * One `POST {base_url}/chat/completions` through the official client, which does the timeout
 * and the retries (0.5 s doubling up to 8 s, or what `retry-after` asks for).
 */
export async function chat(endpoint: LlmEndpoint, req: ChatRequest, opts: ChatOptions): Promise<ChatReply> {
  const client = new OpenAI({
    baseURL: endpoint.baseUrl,
    // The client refuses an empty key; keyless local servers ignore whatever is sent.
    apiKey: endpoint.apiKey || 'none',
    timeout: opts.timeoutMs,
    maxRetries: opts.maxRetries,
  });
  const started = performance.now();
  try {
    const completion = await client.chat.completions.create({
      model: endpoint.model,
      messages: req.messages,
      ...(req.maxTokens !== undefined && { max_tokens: req.maxTokens }),
      ...(req.jsonSchema && {
        response_format: { type: 'json_schema', json_schema: { name: req.jsonSchema.name, strict: true, schema: req.jsonSchema.schema } },
      }),
    });
    if (!Array.isArray(completion?.choices)) throw new Error('The endpoint did not answer with a chat completion');
    return {
      content: completion.choices[0]?.message?.content ?? '',
      model: completion.model || endpoint.model,
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
      latencyMs: performance.now() - started,
    };
  } catch (err) {
    throw new LlmUnavailableError(describe(err), { cause: err });
  }
}

/** A reason a person can act on: the status and the endpoint's message, or the network error. */
function describe(err: unknown): string {
  if (err instanceof APIError && err.status) return `${err.status} ${(err.error as { message?: string })?.message ?? err.message}`;
  if (err instanceof APIConnectionError) {
    // fetch wraps the system error (ECONNREFUSED, ENOTFOUND...) one or two causes down.
    let cause = err.cause as { code?: string; message?: string; cause?: unknown } | undefined;
    while (cause && !cause.code && cause.cause) cause = cause.cause as typeof cause;
    const detail = cause?.code ?? cause?.message;
    return detail ? `${err.message} (${detail})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

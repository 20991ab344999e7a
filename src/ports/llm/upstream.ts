import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { outboundFetch } from '../outbound-http.ts';
import { checkTargetUrl, type TargetRule } from '../public-target.ts';

/**
 * The chat proxies' raw line to an upstream API (OpenAI's chat completions and Responses,
 * Anthropic's Messages): the caller's JSON body sent on as it is, and the answer read whole or as
 * server-sent events, each event as it arrives. A tenant's own endpoint is reached only as its
 * rule allows (outbound-http.ts); the operator's endpoints have none.
 */
export interface Upstream {
  baseUrl: string;
  /** The credential and protocol headers the API wants (`authorization`, `x-api-key`, `anthropic-version`...). */
  headers: Record<string, string>;
  targets?: TargetRule;
}

/** The upstream could not be used: no answer, no answer in time, or an error status (with the API's own message). */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** The most of an error body read for its message. */
const ERROR_BYTES = 64 * 1024;

/**
 * POST `body` as JSON to `{baseUrl}{path}`. Answers the response once its status and headers have
 * arrived within `timeoutMs` (the body may then take as long as the model writes); a non-2xx
 * answer throws with the API's `error.message`. `signal` aborts the request at any point,
 * body included.
 */
export async function postUpstream(up: Upstream, path: string, body: unknown, opts: { signal: AbortSignal; timeoutMs: number }): Promise<Response> {
  const url = `${up.baseUrl.replace(/\/+$/, '')}${path}`;
  const abort = new AbortController();
  const follow = () => abort.abort(opts.signal.reason);
  if (opts.signal.aborted) follow();
  opts.signal.addEventListener('abort', follow, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort(new Error('timeout'));
  }, opts.timeoutMs);
  try {
    if (up.targets) await checkTargetUrl(up.targets, new URL(url));
    const send = up.targets ? outboundFetch(up.targets) : fetch;
    const res = await send(url, {
      method: 'POST',
      headers: { ...up.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    if (res.ok) return res;
    throw new UpstreamError(`${res.status} ${await errorMessage(res)}`, res.status);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (timedOut) throw new UpstreamError(`no answer within ${opts.timeoutMs} ms`, null, true);
    throw new UpstreamError(describeNetwork(err), null);
  } finally {
    clearTimeout(timer);
  }
}

/** The API's own message (`{error: {message}}`, OpenAI's and Anthropic's shape), never the body of anything else. */
async function errorMessage(res: Response): Promise<string> {
  const text = (await res.text().catch(() => '')).slice(0, ERROR_BYTES);
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return message.slice(0, 300);
  } catch {
    // Not JSON: said below.
  }
  return res.status >= 300 && res.status < 400 ? 'a redirect, which is not followed' : 'not an API error answer';
}

function describeNetwork(err: unknown): string {
  let cause = err as { code?: string; message?: string; cause?: unknown } | undefined;
  while (cause && !cause.code && cause.cause) cause = cause.cause as typeof cause;
  return cause?.code ?? cause?.message ?? String(err);
}

/** The body's JSON, or an UpstreamError saying it is not JSON. */
export async function upstreamJson(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamError('the answer is not JSON', res.status);
  }
}

/**
 * The server-sent events of a response body, parsed by eventsource-parser. The body is read from
 * the moment this is called, not when the events are asked for: a body that then breaks off
 * would otherwise lose the events that had arrived unread (a fetch body that fails drops what it
 * held), while the caller is still busy before relaying them (storing the user's turn). Each
 * event is given as soon as its blank line has arrived; a body that breaks off throws (an
 * UpstreamError) after the events before the break. Leaving the iteration cancels the body.
 */
export function sseEvents(res: Response): AsyncIterable<EventSourceMessage> {
  const ready: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => void ready.push(event) });
  const reader = res.body!.getReader();
  let ended = false;
  let failure: UpstreamError | null = null;
  let wake = () => {};
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        parser.feed(decoder.decode(chunk.value, { stream: true }));
        wake();
      }
      parser.feed(decoder.decode());
    } catch (err) {
      failure = new UpstreamError(`the stream broke off: ${describeNetwork(err)}`, null);
    }
    ended = true;
    wake();
  })();
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          if (ready.length) yield ready.shift()!;
          else if (ended) {
            if (failure) throw failure;
            return;
          } else await new Promise<void>((resolve) => (wake = resolve));
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    },
  };
}

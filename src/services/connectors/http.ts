import { setTimeout as sleep } from 'node:timers/promises';
import { outboundFetch } from '../../ports/outbound-http.ts';
import { PrivateTargetError, type TargetRule } from '../../ports/public-target.ts';

/**
 * A provider refused or failed a request, in a sentence for the connection's `last_error`: the
 * status, the host and the provider's own message when it sent one in its API's error format;
 * never a body that is not (the address may not be the provider's at all).
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export interface RequestInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sent as JSON, or as a form when URLSearchParams. */
  body?: unknown;
}

export interface ProviderHttp {
  json<T>(url: string, init?: RequestInit): Promise<T>;
  text(url: string, init?: RequestInit): Promise<string>;
  bytes(url: string, init?: RequestInit): Promise<{ data: Buffer; contentType: string }>;
}

export interface RetryRules {
  /** Tries per request, the first included. */
  tries: number;
  /** First backoff after a 5xx or a network failure, doubled each time. */
  backoffMs: number;
  /** The longest Retry-After honoured; a provider asking for more fails the sync, to be retried by the next one. */
  maxWaitMs: number;
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryRules = { tries: 5, backoffMs: 500, maxWaitMs: 60_000, timeoutMs: 30_000 };

/** Retry-After is seconds or an HTTP date. */
function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** The provider's own words from a JSON error body (the fields the providers here use), or null. */
function errorMessage(body: string): string | null {
  try {
    const j = JSON.parse(body) as Record<string, unknown>;
    const err = j.error as Record<string, unknown> | string | undefined;
    const first = Array.isArray(j.errors) ? (j.errors[0] as Record<string, unknown> | undefined) : undefined;
    const found = j.message ?? j.error_description ?? (typeof err === 'string' ? err : err?.message) ?? first?.message;
    if (typeof found === 'string' && found) return found.slice(0, 300);
  } catch {
    // not JSON: not the provider's error format, and not repeated
  }
  return null;
}

/** The system error under fetch's "fetch failed" (ECONNREFUSED, ENOTFOUND...), or the message. */
function networkReason(err: unknown): string {
  for (let e = err; e instanceof Error; e = e.cause) if ((e as { code?: unknown }).code) return String((e as { code?: unknown }).code);
  return (err as Error)?.message ?? String(err);
}

/**
 * Requests as every provider's documentation asks of clients: a 429 waits for Retry-After, a 5xx
 * or a broken connection backs off and tries again, a 4xx fails at once with the provider's message.
 */
export function providerHttp(provider: string, targets: TargetRule, rules: RetryRules = DEFAULT_RETRY): ProviderHttp {
  const fetch = outboundFetch(targets);
  async function send(url: string, init: RequestInit = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    let body: string | undefined;
    if (init.body instanceof URLSearchParams) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = init.body.toString();
    } else if (init.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(init.body);
    }
    let backoff = rules.backoffMs;
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= rules.tries;
      let res: Response;
      try {
        res = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, signal: AbortSignal.timeout(rules.timeoutMs) });
      } catch (err) {
        // A refused address stays refused: no retry.
        if (err instanceof PrivateTargetError) throw new ProviderError(`${provider} is not reachable from this server: ${err.message}`);
        if (last) throw new ProviderError(`${provider} could not be reached at ${new URL(url).host}: ${networkReason(err)}`);
        await sleep(backoff);
        backoff *= 2;
        continue;
      }
      if (res.ok) return res;
      const text = await res.text().catch(() => '');
      const wait = res.status === 429 ? (retryAfterMs(res.headers.get('retry-after')) ?? backoff) : res.status >= 500 ? backoff : null;
      if (wait === null || last || wait > rules.maxWaitMs) {
        const message = errorMessage(text);
        throw new ProviderError(
          message === null
            ? `${provider} answered ${res.status} at ${new URL(url).host}, without an error of its API (its answers are JSON)`
            : `${provider} answered ${res.status}: ${message}`,
          res.status,
        );
      }
      await sleep(wait);
      if (res.status >= 500) backoff *= 2;
    }
  }
  return {
    async json<T>(url: string, init?: RequestInit) {
      const res = await send(url, init);
      const text = await res.text();
      try {
        return JSON.parse(text) as T;
      } catch {
        const type = res.headers.get('content-type') ?? 'no content type';
        throw new ProviderError(`${provider} answered ${res.status} at ${new URL(url).host} with ${type}, not the JSON its API answers`);
      }
    },
    async text(url: string, init?: RequestInit) {
      return (await send(url, init)).text();
    },
    async bytes(url: string, init?: RequestInit) {
      const res = await send(url, init);
      return { data: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
    },
  };
}

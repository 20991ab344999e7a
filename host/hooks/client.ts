/**
 * The hooks' way to a running orgmem: plain HTTP with `fetch` to ORGMEM_URL with ORGMEM_API_KEY,
 * each call bounded by a deadline. Nothing else is loaded, so that a hook starts in the time of
 * Node itself (bench/README.md, "Hooks").
 */

export interface Server {
  url: string;
  key: string;
}

/** The server from the environment, or why there is none. */
export function serverFromEnv(): Server | string {
  const url = process.env.ORGMEM_URL?.replace(/\/+$/, '');
  const key = process.env.ORGMEM_API_KEY;
  if (!url) return 'ORGMEM_URL is not set: the hooks need the address of a running orgmem (docs/hooks.md)';
  if (!key) return 'ORGMEM_API_KEY is not set: the hooks need an API key (docs/hooks.md)';
  return { url, key };
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`${status}: ${detail}`);
  }
}

/** POST or GET `path` with a JSON body; the answer's JSON, or an HttpError with its detail. */
export async function call<T>(
  server: Server,
  method: 'GET' | 'POST',
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; signal: AbortSignal },
): Promise<T> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.key}`, ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: opts.signal,
  });
  const text = await res.text();
  if (!res.ok) {
    let detail = text.slice(0, 500);
    try {
      detail = String((JSON.parse(text) as { detail?: unknown }).detail ?? detail);
    } catch {
      // not JSON: the start of the body says what happened
    }
    throw new HttpError(res.status, detail);
  }
  return JSON.parse(text) as T;
}

export const collectionPath = (collection: string, rest: string) => `/v1/memory/collections/${encodeURIComponent(collection)}/${rest}`;

/**
 * The hooks' way to a running orgmem: plain HTTP to ORGMEM_URL with ORGMEM_API_KEY,
 * each call bounded by a deadline. Nothing else is loaded, so that a hook starts in the time of
 * Node itself (bench/README.md, "Hooks").
 */
import { SESSION_HEADER, VIA_HEADER } from '../../src/pipeline/call-headers.ts';

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

/** The most of an answer read: a context block is a few KB. */
const MAX_ANSWER = 16 * 1024 * 1024;

/** The harness's session id as the ledger's session header takes it (docs/trust.md): printable, no spaces, at most 200. */
const sessionMark = (session: string) => `hook:${session.replace(/[^\x21-\x7e]/g, '_')}`.slice(0, 200);

/**
 * POST or GET `path` with a JSON body; the answer's JSON, or an HttpError with its detail. Every
 * call says it comes from a hook, and of which session, for the ledger and the trust class of
 * what it captures (docs/trust.md).
 * node:http rather than fetch: fetch loads undici on its first call, which costs a hook more
 * than the rest of its start (bench/README.md, "Hooks").
 */
export async function call<T>(
  server: Server,
  method: 'GET' | 'POST',
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; session?: string; signal: AbortSignal },
): Promise<T> {
  const url = new URL(`${server.url}${path}`);
  const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        signal: opts.signal,
        headers: {
          authorization: `Bearer ${server.key}`,
          [VIA_HEADER]: 'hook',
          ...(opts.session ? { [SESSION_HEADER]: sessionMark(opts.session) } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER) return req.destroy(new Error(`the answer is over ${MAX_ANSWER} bytes`));
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  if (status < 200 || status > 299) {
    let detail = text.slice(0, 500);
    try {
      detail = String((JSON.parse(text) as { detail?: unknown }).detail ?? detail);
    } catch {
      // not JSON: the start of the body says what happened
    }
    throw new HttpError(status, detail);
  }
  return JSON.parse(text) as T;
}

export const collectionPath = (collection: string, rest: string) => `/v1/memory/collections/${encodeURIComponent(collection)}/${rest}`;

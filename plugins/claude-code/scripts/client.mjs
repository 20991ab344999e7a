/**
 * The hooks' way to a running orgmem: plain HTTP with the API key, each call bounded by a
 * deadline. node:http rather than fetch: fetch loads undici on its first call, which costs a hook
 * more than the rest of its start (bench/README.md, "Hooks").
 */

/** The server's headers for a call's session and for a call made by a hook (docs/trust.md). */
const SESSION_HEADER = 'x-orgmem-session';
const VIA_HEADER = 'x-orgmem-via';

export class HttpError extends Error {
  constructor(status, detail) {
    super(`${status}: ${detail}`);
    this.status = status;
  }
}

/** The most of an answer read: a context block is a few KB. */
const MAX_ANSWER = 16 * 1024 * 1024;

/** The harness's session id as the ledger's session header takes it (docs/trust.md): printable, no spaces, at most 200. */
const sessionMark = (session) => `hook:${session.replace(/[^\x21-\x7e]/g, '_')}`.slice(0, 200);

/**
 * POST or GET `path` on `server` ({url, key}) with a JSON body; the answer's JSON, or an HttpError
 * with its detail. Every call says it comes from a hook, and of which session, for the ledger and
 * the trust class of what it captures (docs/trust.md).
 */
export async function call(server, method, path, { body, headers, session, signal }) {
  const url = new URL(`${server.url}${path}`);
  const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const { status, text } = await new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        signal,
        headers: {
          authorization: `Bearer ${server.key}`,
          [VIA_HEADER]: 'hook',
          ...(session ? { [SESSION_HEADER]: sessionMark(session) } : {}),
          ...(bytes ? { 'content-type': 'application/json', 'content-length': String(bytes.length) } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        let size = 0;
        res.on('data', (chunk) => {
          size += chunk.length;
          if (size > MAX_ANSWER) return req.destroy(new Error(`the answer is over ${MAX_ANSWER} bytes`));
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
  if (status < 200 || status > 299) {
    let detail = text.slice(0, 500);
    try {
      detail = String(JSON.parse(text).detail ?? detail);
    } catch {
      // not JSON: the start of the body says what happened
    }
    throw new HttpError(status, detail);
  }
  return JSON.parse(text);
}

export const collectionPath = (collection, rest) => `/v1/memory/collections/${encodeURIComponent(collection)}/${rest}`;

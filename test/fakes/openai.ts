import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI-compatible LLM: a real HTTP server on 127.0.0.1 answering
 * `POST <any prefix>/chat/completions` the way the real API does (chat.completion objects with
 * `usage`, error bodies `{error: {message, type, code}}`). Replies are chosen per call name (the
 * `response_format.json_schema.name`, or `plain` for calls without one, such as the self-test):
 * first from one-shot scripted replies, then from a standing handler.
 */
export interface FakeCall {
  path: string;
  /** The `response_format` schema name, or 'plain'. */
  name: string;
  authorization: string | undefined;
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    max_tokens?: number;
    response_format?: { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
  };
  /** The last user message; for structured calls of ours, usually JSON. */
  user: string;
}

export type FakeReply =
  /** A completion whose content is this object as JSON, or this exact string (to send invalid output). */
  | { json: unknown; delayMs?: number; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { content: string; delayMs?: number; usage?: { prompt_tokens: number; completion_tokens: number } }
  /** An API error with this status. */
  | { status: number; message?: string; delayMs?: number }
  /** Never answers (for timeouts). */
  | { hang: true };

export type FakeHandler = (call: FakeCall) => FakeReply | Promise<FakeReply>;

export interface FakeLlm {
  /** Base URL to configure, e.g. `http://127.0.0.1:1234/v1`. */
  url: string;
  calls: FakeCall[];
  /** Calls made with this schema name (or 'plain'). */
  callsNamed(name: string): FakeCall[];
  /** The standing reply for calls of this name. */
  on(name: string, handler: FakeHandler): void;
  /** One-shot replies for calls of this name, used in order before the standing handler. */
  script(name: string, ...replies: FakeReply[]): void;
  close(): Promise<void>;
}

export async function startFakeLlm(opts: { apiKey?: string; model?: string } = {}): Promise<FakeLlm> {
  const handlers = new Map<string, FakeHandler>([['plain', () => ({ content: 'OK' })]]);
  const scripts = new Map<string, FakeReply[]>();
  const calls: FakeCall[] = [];

  const server = createServer(async (req, res) => {
    try {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return error(res, 404, 'Not found');
      const body = JSON.parse(await read(req)) as FakeCall['body'];
      if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        return error(res, 401, 'Incorrect API key provided', 'invalid_api_key');
      }
      const name = body.response_format?.json_schema?.name ?? 'plain';
      const call: FakeCall = {
        path: req.url,
        name,
        authorization: req.headers.authorization,
        body,
        user: [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '',
      };
      calls.push(call);
      const scripted = scripts.get(name)?.shift();
      const handler = handlers.get(name);
      const reply = scripted ?? (handler ? await handler(call) : { status: 500, message: `the fake has no reply for ${name}` });
      if ('hang' in reply) return;
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if ('status' in reply) return error(res, reply.status, reply.message ?? `fake error ${reply.status}`);
      const content = 'json' in reply ? JSON.stringify(reply.json) : reply.content;
      const usage = reply.usage ?? {
        prompt_tokens: Math.ceil(JSON.stringify(body.messages).length / 4),
        completion_tokens: Math.ceil(content.length / 4),
      };
      send(res, 200, {
        id: `chatcmpl-${calls.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: opts.model ?? body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      });
    } catch (err) {
      error(res, 500, String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls,
    callsNamed: (name) => calls.filter((c) => c.name === name),
    on: (name, handler) => void handlers.set(name, handler),
    script: (name, ...replies) => void scripts.set(name, [...(scripts.get(name) ?? []), ...replies]),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, message: string, code: string | null = null) {
  // A short retry-after-ms keeps the client's retries fast in tests; the client honours it.
  send(res, status, { error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', param: null, code } }, { 'retry-after-ms': '10' });
}

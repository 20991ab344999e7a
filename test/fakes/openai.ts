import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI-compatible LLM: a real HTTP server on 127.0.0.1 answering
 * `POST <any prefix>/chat/completions` and `POST <any prefix>/audio/transcriptions` the way the
 * real API does (chat.completion objects with `usage`, `{text, usage}` transcriptions, error
 * bodies `{error: {message, type, code}}`). Replies are chosen per call name (the
 * `response_format.json_schema.name`; else `caption` for a chat with an image part, `plain` for
 * other calls without one, such as the self-test; `transcription` for transcriptions): first
 * from one-shot scripted replies, then from a standing handler. A chat request with `stream: true`
 * is answered the way the real API streams: `chat.completion.chunk` events (the role, the content
 * a word at a time, the finish reason, the usage chunk when `stream_options.include_usage` asks),
 * then `data: [DONE]`; `cut` breaks such a stream off on purpose. `POST <prefix>/responses` (call
 * name `responses`) answers a Responses API response, or with `stream: true` its semantic events
 * (response.created ... response.output_text.delta ... response.completed, no [DONE]).
 */
export interface FakeCall {
  path: string;
  /** The `response_format` schema name, or 'caption', 'plain' or 'transcription'. */
  name: string;
  authorization: string | undefined;
  body: {
    model: string;
    /** Empty for transcriptions. */
    messages: Array<{ role: string; content: string | Array<{ type: string; text?: string; image_url?: { url: string } }> }>;
    max_tokens?: number;
    response_format?: { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
    /** Whatever else the request carried (tools, seed... as a proxied request sends them). */
    [field: string]: unknown;
  };
  /** The last user message (its text parts, for one in parts); for structured calls of ours, usually JSON. */
  user: string;
  /** The uploaded file of a transcription. */
  file?: { filename: string; type: string; size: number; data: Buffer };
}

/**
 * How a streamed reply breaks off after `after` content chunks: the connection closed mid-body, an
 * `{error}` event (as the real API sends mid-stream), or no more bytes ever (for a client that leaves).
 */
export interface StreamCut {
  after: number;
  how: 'drop' | 'error' | 'hold';
}

export type FakeReply =
  /** A completion (or transcription text) that is this object as JSON, or this exact string (to send invalid output). */
  | { json: unknown; delayMs?: number; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { content: string; delayMs?: number; usage?: { prompt_tokens: number; completion_tokens: number }; cut?: StreamCut }
  /** This body, as it is, as the chat completion (extra fields, tool calls, or something that is not a completion). */
  | { completion: unknown }
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
  /** Streamed replies whose client closed the connection before the end. */
  readonly abandoned: number;
  close(): Promise<void>;
}

export async function startFakeLlm(opts: { apiKey?: string; model?: string } = {}): Promise<FakeLlm> {
  const handlers = new Map<string, FakeHandler>([
    ['plain', () => ({ content: 'OK' })],
    ['caption', () => ({ content: 'A picture.' })],
    ['transcription', (call) => ({ content: `A recording named ${call.file!.filename}.` })],
    ['responses', () => ({ content: 'OK' })],
  ]);
  const scripts = new Map<string, FakeReply[]>();
  const calls: FakeCall[] = [];
  let abandoned = 0;

  const server = createServer(async (req, res) => {
    try {
      const transcription = req.url?.endsWith('/audio/transcriptions');
      const responses = req.url?.endsWith('/responses');
      if (req.method !== 'POST' || !(transcription || responses || req.url?.endsWith('/chat/completions'))) return error(res, 404, 'Not found');
      const raw = await read(req);
      if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        return error(res, 401, 'Incorrect API key provided', 'invalid_api_key');
      }
      const call = transcription ? await transcriptionCall(req, raw) : responses ? responsesCall(req, raw) : chatCall(req, raw);
      calls.push(call);
      const scripted = scripts.get(call.name)?.shift();
      const handler = handlers.get(call.name);
      const reply = scripted ?? (handler ? await handler(call) : { status: 500, message: `the fake has no reply for ${call.name}` });
      if ('hang' in reply) return;
      if ('completion' in reply) return send(res, 200, reply.completion);
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if ('status' in reply) return error(res, reply.status, reply.message ?? `fake error ${reply.status}`);
      const content = 'json' in reply ? JSON.stringify(reply.json) : reply.content;
      const usage = reply.usage ?? {
        prompt_tokens: Math.ceil((call.file?.size ?? JSON.stringify(call.body.messages).length) / 4),
        completion_tokens: Math.ceil(content.length / 4),
      };
      if (responses) {
        if (call.body.stream === true) res.on('close', () => void (res.writableFinished || abandoned++));
        return answerResponse(res, call, `resp_${calls.length}`, content, usage, 'cut' in reply ? reply.cut : undefined);
      }
      if (call.body.stream === true && !transcription) {
        res.on('close', () => void (res.writableFinished || abandoned++));
        return streamReply(res, call, content, usage, 'cut' in reply ? reply.cut : undefined, opts.model);
      }
      if (transcription) {
        const { prompt_tokens: input_tokens, completion_tokens: output_tokens } = usage;
        return send(res, 200, { text: content, usage: { type: 'tokens', input_tokens, output_tokens, total_tokens: input_tokens + output_tokens } });
      }
      send(res, 200, {
        id: `chatcmpl-${calls.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: opts.model ?? call.body.model,
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
    get abandoned() {
      return abandoned;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chatCall(req: IncomingMessage, raw: Buffer): FakeCall {
  const body = JSON.parse(raw.toString('utf8')) as FakeCall['body'];
  const user = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const hasImage = Array.isArray(user) && user.some((p) => p.type === 'image_url');
  return {
    path: req.url!,
    name: body.response_format?.json_schema?.name ?? (hasImage ? 'caption' : 'plain'),
    authorization: req.headers.authorization,
    body,
    user: Array.isArray(user) ? user.map((p) => p.text ?? '').join('') : user,
  };
}

/** The client's multipart body, read with the Web `Request` parser as a real server would. */
async function transcriptionCall(req: IncomingMessage, raw: Buffer): Promise<FakeCall> {
  const form = await new Request('http://fake.invalid/', {
    method: 'POST',
    headers: { 'content-type': req.headers['content-type'] ?? '' },
    body: new Uint8Array(raw),
  }).formData();
  const file = form.get('file');
  if (!(file instanceof File)) throw new Error('the transcription request has no file part');
  const data = Buffer.from(await file.arrayBuffer());
  return {
    path: req.url!,
    name: 'transcription',
    authorization: req.headers.authorization,
    body: { model: String(form.get('model')), messages: [] },
    user: '',
    file: { filename: file.name, type: file.type, size: data.length, data },
  };
}

function read(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
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

/** A chat completion as the real API streams it (see the top of this file). */
function streamReply(
  res: ServerResponse,
  call: FakeCall,
  content: string,
  usage: { prompt_tokens: number; completion_tokens: number },
  cut: StreamCut | undefined,
  model = call.body.model,
) {
  const includeUsage = (call.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const base = { id: 'chatcmpl-stream', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...(includeUsage && { usage: null }) })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk({ role: 'assistant', content: '' }));
  const words = content.split(/(?<= )/);
  for (const [i, word] of words.entries()) {
    if (cut && i === cut.after) {
      // The connection closed mid-body (a reset could make the client's kernel drop the chunks before it).
      if (cut.how === 'drop') return res.socket?.end();
      if (cut.how === 'error')
        return res.end(`data: ${JSON.stringify({ error: { message: 'The model crashed', type: 'server_error', param: null, code: null } })}\n\n`);
      return; // hold: nothing more, until the client leaves
    }
    res.write(chunk({ content: word }));
  }
  res.write(chunk({}, 'stop'));
  if (includeUsage) {
    const total = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: total })}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

/** A Responses API request: `user` is the last user message's text of `input`. */
function responsesCall(req: IncomingMessage, raw: Buffer): FakeCall {
  const body = JSON.parse(raw.toString('utf8')) as FakeCall['body'] & { input: string | Array<{ role?: string; content?: unknown }> };
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const last = [...items].reverse().find((i) => i.role === 'user')?.content;
  const user = typeof last === 'string' ? last : Array.isArray(last) ? last.map((p: { text?: string }) => p.text ?? '').join('') : '';
  return { path: req.url!, name: 'responses', authorization: req.headers.authorization, body: { ...body, messages: [] }, user };
}

/** A response, whole or as the real API streams it (see the top of this file). */
function answerResponse(
  res: ServerResponse,
  call: FakeCall,
  id: string,
  text: string,
  usage: { prompt_tokens: number; completion_tokens: number },
  cut: StreamCut | undefined,
) {
  const item = { id: `msg_${id}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  const tokens = { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: call.body.model,
    output: [item],
    usage: tokens,
  };
  if (call.body.stream !== true) return send(res, 200, response);
  let sequence = 0;
  const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const pending = { ...response, status: 'in_progress', output: [], usage: null };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  event('response.created', { response: pending });
  event('response.in_progress', { response: pending });
  event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
  event('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
  for (const [i, word] of text.split(/(?<= )/).entries()) {
    if (cut && i === cut.after) {
      if (cut.how === 'drop') return res.socket?.end();
      if (cut.how === 'error')
        return res.end(
          `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'server_error', message: 'The model crashed', param: null, sequence_number: sequence })}\n\n`,
        );
      return;
    }
    event('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: word, logprobs: [] });
  }
  event('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text, logprobs: [] });
  event('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: item.content[0] });
  event('response.output_item.done', { output_index: 0, item });
  event('response.completed', { response });
  res.end();
}

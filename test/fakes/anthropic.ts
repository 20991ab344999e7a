import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamCut } from './openai.ts';

/**
 * A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 answering `POST /v1/messages`
 * (whole, or with `stream: true` the real event sequence: message_start, ping, then per block
 * content_block_start, its deltas (text_delta a word at a time, thinking_delta then
 * signature_delta, input_json_delta) and content_block_stop, then message_delta and
 * message_stop) and `POST /v1/messages/count_tokens`, checking `x-api-key` and
 * `anthropic-version` as the real API does, with its error bodies `{type: "error", error}`.
 */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicCall {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> & { model: string; messages: Array<{ role: string; content: unknown }>; stream?: boolean };
}

export type AnthropicReply =
  { content: Block[]; usage?: { input_tokens: number; output_tokens: number }; cut?: StreamCut } | { status: number; message: string };

export interface FakeAnthropic {
  /** The base URL to configure (the SDK's and ORGMEM_ANTHROPIC_BASE_URL's form: no /v1). */
  url: string;
  calls: AnthropicCall[];
  /** One-shot replies, used in order before the standing one. */
  script(...replies: AnthropicReply[]): void;
  readonly abandoned: number;
  close(): Promise<void>;
}

export async function startFakeAnthropic(opts: { apiKey: string; reply: (call: AnthropicCall) => AnthropicReply }): Promise<FakeAnthropic> {
  const calls: AnthropicCall[] = [];
  const scripts: AnthropicReply[] = [];
  let abandoned = 0;
  const server = createServer(async (req, res) => {
    const raw = await read(req);
    if (req.headers['x-api-key'] !== opts.apiKey) return error(res, 401, 'authentication_error', 'invalid x-api-key');
    if (!req.headers['anthropic-version']) return error(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
    const call: AnthropicCall = { path: req.url!, headers: req.headers, body: JSON.parse(raw) as AnthropicCall['body'] };
    calls.push(call);
    if (req.url === '/v1/messages/count_tokens') return send(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
    if (req.url !== '/v1/messages') return error(res, 404, 'not_found_error', 'Not found');
    const reply = scripts.shift() ?? opts.reply(call);
    if ('status' in reply) return error(res, reply.status, 'api_error', reply.message);
    const usage = reply.usage ?? { input_tokens: Math.ceil(raw.length / 4), output_tokens: 12 };
    const message = {
      id: `msg_${calls.length}`,
      type: 'message',
      role: 'assistant',
      model: call.body.model,
      content: reply.content,
      stop_reason: reply.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage,
    };
    if (!call.body.stream) return send(res, 200, message);
    res.on('close', () => void (res.writableFinished || abandoned++));
    streamMessage(res, message, reply.cut);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    script: (...replies) => void scripts.push(...replies),
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

function streamMessage(
  res: ServerResponse,
  message: { content: Block[]; usage: { input_tokens: number; output_tokens: number }; stop_reason: string },
  cut?: StreamCut,
) {
  const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } });
  event('ping', {});
  let deltas = 0;
  for (const [index, block] of message.content.entries()) {
    const start =
      block.type === 'text'
        ? { type: 'text', text: '' }
        : block.type === 'thinking'
          ? { type: 'thinking', thinking: '', signature: '' }
          : { ...block, input: {} };
    event('content_block_start', { index, content_block: start });
    const parts =
      block.type === 'text'
        ? block.text.split(/(?<= )/).map((text) => ({ type: 'text_delta', text }))
        : block.type === 'thinking'
          ? [
              { type: 'thinking_delta', thinking: block.thinking },
              { type: 'signature_delta', signature: block.signature },
            ]
          : [{ type: 'input_json_delta', partial_json: JSON.stringify(block.input) }];
    for (const delta of parts) {
      if (cut && deltas++ === cut.after) {
        if (cut.how === 'drop') return res.socket?.end();
        if (cut.how === 'error')
          return res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`);
        return; // hold
      }
      event('content_block_delta', { index, delta });
    }
    event('content_block_stop', { index });
  }
  event('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens } });
  event('message_stop', {});
  res.end();
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const error = (res: ServerResponse, status: number, type: string, message: string) => send(res, status, { type: 'error', error: { type, message } });

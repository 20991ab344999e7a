import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeEmbeddings {
  url: string;
  /** Every request body answered, in order. */
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible POST /embeddings on 127.0.0.1. Vectors are derived from the text's
 * characters so equal texts get equal vectors; the answer uses float arrays, as servers that
 * ignore `encoding_format` do. `delayMs` holds each answer back, as a busy model server would;
 * `fails(n)` makes the n-th request (from 0, every one counted) a 500.
 */
export async function startFakeEmbeddings(opts: { delayMs?: number; fails?: (n: number) => boolean } = {}): Promise<FakeEmbeddings> {
  const requests: FakeEmbeddings['requests'] = [];
  let received = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/embeddings') {
        res.writeHead(404).end();
        return;
      }
      if (opts.fails?.(received++)) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'failing on purpose' } }));
        return;
      }
      const body = JSON.parse(raw) as { input: string[]; dimensions: number; model: string };
      requests.push(body);
      const data = body.input.map((text, index) => {
        const v = Array.from({ length: body.dimensions }, (_, i) => Math.sin((text.charCodeAt(i % text.length) || 1) * (i + 1)));
        return { object: 'embedding', index, embedding: v };
      });
      const answer = JSON.stringify({ object: 'list', model: body.model, data, usage: { prompt_tokens: 1, total_tokens: 1 } });
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(answer), opts.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A record held by a fake provider; `updated` (ms) grows strictly with every put, as a provider's change time does. */
export interface FakeRecord {
  id: string;
  title: string;
  body: string;
  author: string;
  updated: number;
}

export interface FakeRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeAnswer {
  status?: number;
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface ProviderFake {
  /** The base URL to configure as the provider's API URL. */
  url: string;
  /** Newest last. */
  records: FakeRecord[];
  /** Adds a record, or changes the one with this id (it becomes the newest). */
  put(r: { id?: string; title: string; body: string; author?: string }): FakeRecord;
  /** The next `times` API requests fail with this status: a 429 carries Retry-After: 1; others a JSON `{message}`. */
  failNext(status: number, times?: number): void;
  /** Every API request received, failed ones included. */
  requests: FakeRequest[];
  /** Credentials and config of a connection that reads this fake. */
  connection(): { credentials: Record<string, unknown>; config: Record<string, unknown> };
  close(): Promise<void>;
}

export interface FakeSpec {
  /** Answers one request; `fake` gives the records. Thrown errors become 500s. */
  route(req: FakeRequest, fake: ProviderFake): FakeAnswer | Promise<FakeAnswer>;
  connection(url: string): { credentials: Record<string, unknown>; config: Record<string, unknown> };
  /** Id of a new record; `n` counts from 1. */
  newId?(n: number): string;
}

/** The bearer token of a request, if any. */
export const bearer = (req: FakeRequest) => /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;

export const readJson = <T = Record<string, unknown>>(req: FakeRequest): T => (req.body ? JSON.parse(req.body) : {}) as T;

/**
 * A provider's HTTP API on 127.0.0.1: records in memory, every request logged, and failures on
 * demand. Each provider's fake gives the routes and the response shapes of its real API.
 */
export async function startProviderFake(spec: FakeSpec): Promise<ProviderFake> {
  const failures: number[] = [];
  let n = 0;
  let last = Date.now() - 3_600_000;
  const fake: ProviderFake = {
    url: '',
    records: [],
    requests: [],
    put(r) {
      const updated = (last = Math.max(Date.now(), last + 1000));
      const existing = r.id ? fake.records.findIndex((x) => x.id === r.id) : -1;
      const record: FakeRecord = {
        id: r.id ?? (spec.newId ? spec.newId(++n) : `rec-${++n}`),
        title: r.title,
        body: r.body,
        author: r.author ?? 'Ana Lima',
        updated,
      };
      if (existing >= 0) fake.records.splice(existing, 1);
      fake.records.push(record);
      return record;
    },
    failNext(status, times = 1) {
      for (let i = 0; i < times; i++) failures.push(status);
    },
    connection: () => spec.connection(fake.url),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', fake.url),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      fake.requests.push(request);
      const failure = failures.shift();
      if (failure === 429) return void res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"message":"rate limited"}');
      if (failure) return void res.writeHead(failure, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `fake failure ${failure}` }));
      let answer: FakeAnswer;
      try {
        answer = await spec.route(request, fake);
      } catch (err) {
        answer = { status: 500, json: { message: String((err as Error).message) } };
      }
      const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.body ?? '');
      const type = answer.json !== undefined ? { 'content-type': 'application/json' } : {};
      res.writeHead(answer.status ?? 200, { ...type, ...answer.headers }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

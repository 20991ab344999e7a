import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, shared, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * What the HTTP server itself refuses, before any procedure runs, is answered like any other
 * error: a `{detail}` JSON body with the client's 4xx, never fastify's or Node's own answer.
 */

const { url, adminKey } = shared();
const C = '/v1/memory/collections';

/** A raw request on its own connection, for what fetch will not send; resolves with the whole answer. */
function rawRequest(request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

function expectDetail(res: { status: number; body: unknown; headers: Headers }, status: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toMatchObject({ detail: expect.any(String) });
  expect(res.body).not.toHaveProperty('code');
}

describe('errors the HTTP server answers itself', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await newTenant(url, adminKey);
  });

  it('a path parameter of any length reaches its schema: a long collection name is 422, a long id 404', async () => {
    for (const length of [101, 5000]) {
      expectDetail(await t.api('GET', `${C}/${'a'.repeat(length)}`), 422);
      expectDetail(await t.api('GET', `${C}/notes/memories/${'a'.repeat(length)}`), 404);
    }
  });

  it('a path that is not valid percent-encoding is a 400', async () => {
    const res = await t.api('GET', `${C}/%ZZ`);
    expectDetail(res, 400);
    expect(res.body.detail).toMatch(/malformed URL/i);
  });

  it('headers or a request line over the limit are a 431 with a JSON body', async () => {
    const answers = [
      await rawRequest(`GET /v1/memory/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`),
      await rawRequest(`GET ${C}/${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    ];
    for (const answer of answers) {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 431 /);
      expect(head).toMatch(/^content-type: application\/json$/im);
      expect(JSON.parse(body)).toEqual({ detail: expect.stringMatching(/larger than \d+ bytes/) });
    }
  });

  it('an oversized bearer token (60 kB) is a 401 with {detail}, not a 431', async () => {
    const answer = await rawRequest(`GET ${C} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer mv_${'a'.repeat(60_000)}\r\nConnection: close\r\n\r\n`);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 401 /);
    expect(head).toMatch(/^www-authenticate: Bearer$/im);
    expect(JSON.parse(body)).toEqual({ detail: 'The Authorization header is longer than any API key (1024 characters)' });
  });

  it('bytes that are not HTTP are a 400 with a JSON body', async () => {
    const [head = '', body = ''] = (await rawRequest('NOT HTTP AT ALL\r\n\r\n')).split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(body)).toEqual({ detail: expect.any(String) });
  });

  it('a text/plain body to a JSON route is a 400 and stores nothing', async () => {
    expect((await t.api('POST', `${C}/plain/memories`, { text: 'stored as JSON' })).status).toBe(201);
    const res = await call(url, 'POST', `${C}/plain/memories`, {
      key: t.key,
      rawBody: JSON.stringify({ text: 'sent as text/plain' }),
      headers: { 'content-type': 'text/plain' },
    });
    expectDetail(res, 400);
    expect(res.body.detail).toMatch(/content type text\/plain/);
    const list = await t.api('GET', `${C}/plain/memories`);
    expect(list.body.map((m: { text: string }) => m.text)).toEqual(['stored as JSON']);
  });
});

describe('the pageview beacon', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.close());

  it('still reads a text/plain body (navigator.sendBeacon)', async () => {
    const res = await fetch(`${server.url}/v1/pulse`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ path: '/beacon-docs' }),
    });
    expect(res.status).toBe(204);
    const rows = await server.app.db.query<{ path: string }>('select path from pageviews where path = $1', ['/beacon-docs']);
    expect(rows).toEqual([{ path: '/beacon-docs' }]);
  });
});

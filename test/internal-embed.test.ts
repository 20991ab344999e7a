import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.ts';
import { call } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/** POST /v1/memory/_internal/embed: the server's embedder for the operator's own processes, behind a shared secret. */
const SECRET = 'internal-secret-0123456789abcdef';
const PATH = '/v1/memory/_internal/embed';

let server: TestServer;
let closed: TestServer;
const embed = (body: unknown, headers: Record<string, string> = { 'x-internal-secret': SECRET }, on = server) => call(on.url, 'POST', PATH, { body, headers });

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_EMBEDDINGS_DIMENSIONS: '64', ORGMEM_INTERNAL_SECRET: SECRET }, { worker: false });
  closed = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
});

afterAll(async () => {
  await server?.close();
  await closed?.close();
});

describe('internal embed endpoint', () => {
  it("embeds with the server's embedder: one vector per text, in order, of its dimension", async () => {
    const texts = ['the first text', 'a second, different text', 'the first text'];
    const res = await embed({ texts });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe(server.app.embedder.name);
    expect(res.body.dimensions).toBe(64);
    expect(res.body.embeddings).toHaveLength(3);
    for (const v of res.body.embeddings) {
      expect(v).toHaveLength(64);
      expect(v.every((x: unknown) => typeof x === 'number')).toBe(true);
    }
    // The same vectors as the embedder gives the stored memories.
    expect(res.body.embeddings).toEqual((await server.app.embedder.embed(texts)).map((v) => Array.from(v)));
    expect(res.body.embeddings[0]).toEqual(res.body.embeddings[2]);
    expect(res.body.embeddings[0]).not.toEqual(res.body.embeddings[1]);
  });

  it('answers 401 without the secret or with a wrong one, even with an API key', async () => {
    const tries: Array<Record<string, string>> = [{}, { 'x-internal-secret': 'wrong-secret-0123456789abcdef' }, { 'x-internal-secret': SECRET.slice(0, -1) }];
    for (const headers of tries) {
      const res = await call(server.url, 'POST', PATH, { key: server.adminKey, headers, body: { texts: ['hello'] } });
      expect(res.status).toBe(401);
      expect(res.body.detail).toContain('X-Internal-Secret');
      expect(res.body.embeddings).toBeUndefined();
    }
  });

  it('is closed when ORGMEM_INTERNAL_SECRET is unset', async () => {
    const tries: Array<Record<string, string>> = [{}, { 'x-internal-secret': SECRET }, { 'x-internal-secret': '' }];
    for (const headers of tries) {
      expect((await embed({ texts: ['hello'] }, headers, closed)).status).toBe(401);
    }
  });

  it('answers 422 to bad input', async () => {
    for (const body of [
      {},
      { texts: [] },
      { texts: [''] },
      { texts: 'not an array' },
      { texts: [42] },
      { texts: ['x'.repeat(10_001)] },
      { texts: Array.from({ length: 257 }, () => 'x') },
    ]) {
      const res = await embed(body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
      expect(res.body.detail).toEqual(expect.any(String));
    }
    // The limits themselves are accepted.
    const most = await embed({ texts: Array.from({ length: 256 }, (_, i) => `${i} ${'y'.repeat(100)}`) });
    expect(most.status).toBe(200);
    expect(most.body.embeddings).toHaveLength(256);
    expect((await embed({ texts: ['z'.repeat(10_000)] })).status).toBe(200);
  });

  it('the config refuses a secret shorter than 16 characters', () => {
    expect(() => loadConfig({ ORGMEM_DATA_DIR: 'memory://', ORGMEM_INTERNAL_SECRET: 'short' })).toThrow(/ORGMEM_INTERNAL_SECRET/);
    expect(loadConfig({ ORGMEM_DATA_DIR: 'memory://', ORGMEM_INTERNAL_SECRET: SECRET }).internalSecret).toBe(SECRET);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUseEmbedder } from '../src/ports/embedder/local-use.ts';
import { newTenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from './fakes/embeddings-server.ts';

describe('OpenAI-compatible embeddings endpoint', () => {
  let fake: FakeEmbeddings;
  let server: TestServer;

  beforeAll(async () => {
    fake = await startFakeEmbeddings();
    server = await startServer(
      { ORGMEM_EMBEDDINGS_BASE_URL: fake.url, ORGMEM_EMBEDDINGS_MODEL: 'fake-embed', ORGMEM_EMBEDDINGS_DIMENSIONS: '512' },
      { worker: false },
    );
  });
  afterAll(async () => {
    await server.close();
    await fake.close();
  });

  it('embeds in the create request, asking for the database dimension as floats', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await t.api('POST', '/v1/memory/collections/e/memories', { text: 'embedded remotely' });
    expect(res.status).toBe(201);
    expect(fake.requests.at(-1)).toMatchObject({ model: 'fake-embed', input: ['embedded remotely'], dimensions: 512, encoding_format: 'float' });
    const [row] = await server.app.db.query<{ dims: number }>('select vector_dims(embedding) as dims from memories where id = $1', [res.body.id]);
    expect(row!.dims).toBe(512);
  });

  it('bulk sends one batched request, and a re-texted memory is embedded again', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const before = fake.requests.length;
    const bulk = await t.api('POST', '/v1/memory/collections/e/memories/bulk', [{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    expect(bulk.status).toBe(201);
    expect(fake.requests.length).toBe(before + 1);
    expect(fake.requests.at(-1)!.input).toEqual(['one', 'two', 'three']);
    const id = bulk.body.ids[0];
    const read = async () => (await server.app.db.query<{ e: string }>('select embedding::text as e from memories where id = $1', [id]))[0]!.e;
    const old = await read();
    await t.api('PATCH', `/v1/memory/collections/e/memories/${id}`, { importance: 0.9 });
    expect(await read()).toBe(old);
    await t.api('PATCH', `/v1/memory/collections/e/memories/${id}`, { text: 'a different text' });
    expect(fake.requests.at(-1)!.input).toEqual(['a different text']);
    expect(await read()).not.toBe(old);
  });
});

describe('bundled Universal Sentence Encoder lite', () => {
  it('gives 512-d vectors where paraphrases are closer than unrelated sentences', async () => {
    const [a, b, c] = await localUseEmbedder().embed([
      'The cat sat on the mat.',
      'A kitten was sitting on the rug.',
      'Quarterly revenue grew by four percent.',
    ]);
    const cos = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0) / (Math.hypot(...x) * Math.hypot(...y));
    expect(a).toHaveLength(512);
    expect(cos(a!, b!)).toBeGreaterThan(cos(a!, c!) + 0.2);
  });
});

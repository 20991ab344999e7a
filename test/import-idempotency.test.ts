import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEmbeddings, type FakeEmbeddings } from './fakes/embeddings-server.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { spawnedServer } from './support/spawned-server.ts';
import { trpcClient } from './support/transports.ts';

const IMPORT = '/v1/memory/admin/import';
const items = (n: number, tag = 'item') => Array.from({ length: n }, (_, i) => ({ text: `${tag} ${i}`, collection: 'imported' }));
const count = async (t: Tenant) => (await t.api('GET', '/v1/memory/admin/stats')).body.memories as number;

describe('imports with an idempotency key', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
  });
  afterAll(() => server?.close());
  const send = (t: Tenant, body: unknown, key?: string) =>
    call(server.url, 'POST', IMPORT, { key: t.key, body, headers: key ? { 'idempotency-key': key } : {} });

  it('answers the same import again for the same key and body, storing nothing twice', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: [...items(250), { text: '' }] };
    const first = await send(t, body, 'import-1');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ idempotency_key: 'import-1', complete: true, total: 251, imported: 250, skipped: 1, pending: 0 });
    expect(first.body.errors).toEqual([{ index: 250, detail: expect.stringMatching(/text/) }]);
    const again = await send(t, body, 'import-1');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await count(t)).toBe(250);

    // The status, by the key or by the id.
    for (const ref of ['import-1', first.body.import_id]) expect((await t.api('GET', `${IMPORT}/${ref}`)).body).toEqual(first.body);
    // tRPC callers send the key as a field.
    const viaTrpc = await trpcClient(server.url, t.key).admin.import.mutate({ ...body, idempotency_key: 'import-1' });
    expect(viaTrpc).toEqual(first.body);
    expect(await count(t)).toBe(250);
  });

  it('refuses the same key with another body (422) and answers 404 for an unknown import', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await send(t, { memories: items(3) }, 'k')).status).toBe(200);
    const other = await send(t, { memories: items(4) }, 'k');
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/Idempotency-Key was used with another body/);
    expect(await count(t)).toBe(3);
    expect((await send(t, { memories: items(3) }, 'bad key')).status).toBe(422);
    const missing = await t.api('GET', `${IMPORT}/nothing-here`);
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/nothing-here not found/);
    // Another tenant's key names nothing here.
    const stranger = await newTenant(server.url, server.adminKey);
    expect((await stranger.api('GET', `${IMPORT}/k`)).status).toBe(404);
    // The same key in another tenant is another import.
    expect((await send(stranger, { memories: items(4) }, 'k')).body).toMatchObject({ imported: 4 });
  });

  it('imports without a key as before: each request a new import', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const a = await send(t, { memories: items(2) });
    const b = await send(t, { memories: items(2) });
    expect(a.body).toMatchObject({ idempotency_key: null, imported: 2, complete: true });
    expect(b.body.import_id).not.toBe(a.body.import_id);
    expect(await count(t)).toBe(4);
  });

  it('resumes an import cut short after its last committed step', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: items(350) };
    const done = await send(t, body, 'cut');
    expect(done.body).toMatchObject({ imported: 350, complete: true });
    // What a crash after the second step leaves: 200 stored, the record at 200 and not complete.
    await server.app.db.query(`delete from memories where tenant_id = $1 and text = any($2)`, [
      t.id,
      items(350)
        .slice(200)
        .map((i) => i.text),
    ]);
    await server.app.db.query(`update imports set processed = 200, imported = 200, completed_at = null where tenant_id = $1`, [t.id]);
    expect((await t.api('GET', `${IMPORT}/cut`)).body).toMatchObject({ complete: false, imported: 200, pending: 150 });
    const resumed = await send(t, body, 'cut');
    expect(resumed.body).toMatchObject({ import_id: done.body.import_id, complete: true, imported: 350, pending: 0 });
    const texts = (await server.app.db.query<{ text: string }>(`select text from memories where tenant_id = $1`, [t.id])).map((r) => r.text);
    expect(texts.sort()).toEqual(
      items(350)
        .map((i) => i.text)
        .sort(),
    );
  });

  it('runs one import once when the same key is sent twice at the same time', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: items(600) };
    const [a, b] = await Promise.all([send(t, body, 'twice'), send(t, body, 'twice')]);
    // Each is the finished import, or a 409 because the other was running it.
    for (const r of [a, b]) {
      expect([200, 409]).toContain(r.status);
      if (r.status === 409) expect(r.body.detail).toMatch(/being run by another request/);
    }
    expect((await send(t, body, 'twice')).body).toMatchObject({ complete: true, imported: 600 });
    expect(await count(t)).toBe(600);
  });
});

describe('an import whose step cannot be stored (the embedder fails)', () => {
  let embeddings: FakeEmbeddings;
  let server: TestServer;
  // The third step's request fails with both of the client's retries; every other request succeeds.
  beforeAll(async () => {
    embeddings = await startFakeEmbeddings({ fails: (n) => n >= 2 && n <= 4 });
    server = await startServer({ ORGMEM_EMBEDDINGS_BASE_URL: embeddings.url, ORGMEM_EMBEDDINGS_DIMENSIONS: '64' }, { worker: false });
  });
  afterAll(async () => {
    await server?.close();
    await embeddings?.close();
  });

  it('stops there with a key, and the same request stores the step on its retry: nothing skipped, nothing twice', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: items(500) };
    const headers = { 'idempotency-key': 'flaky' };
    const stopped = await call(server.url, 'POST', IMPORT, { key: t.key, body, headers });
    expect(stopped.status).toBe(503);
    expect(stopped.body.detail).toMatch(
      /^Import [0-9a-f-]+ stopped at its item 200: storing a step failed \(request [0-9a-f-]+\); 200 items before it are handled\. Send the same request with the same Idempotency-Key to resume there$/,
    );
    expect((await t.api('GET', `${IMPORT}/flaky`)).body).toMatchObject({ complete: false, imported: 200, skipped: 0, pending: 300, errors: [] });
    const retry = await call(server.url, 'POST', IMPORT, { key: t.key, body, headers });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ complete: true, imported: 500, skipped: 0, pending: 0, errors: [] });
    expect(await count(t)).toBe(500);
  });
});

describe('an import whose server process is killed mid-way', () => {
  let embeddings: FakeEmbeddings;
  beforeAll(async () => {
    // 200 ms a step of 100 memories: the 3,000 take 6 s, long enough to be killed in the middle.
    embeddings = await startFakeEmbeddings({ delayMs: 200 });
  });
  afterAll(() => embeddings?.close());

  it('ends with each item stored once after a retry with the same key', { timeout: 120_000 }, async () => {
    const spawned = await spawnedServer({ ORGMEM_EMBEDDINGS_BASE_URL: embeddings.url, ORGMEM_EMBEDDINGS_DIMENSIONS: '64' });
    try {
      let url = await spawned.start();
      const body = JSON.stringify({ memories: items(3000) });
      const headers = { 'idempotency-key': 'big-import' };
      const first = call(url, 'POST', IMPORT, { key: spawned.key, rawBody: body, headers }).catch((err: Error) => err);
      await expect
        .poll(async () => (await call(url, 'GET', `${IMPORT}/big-import`, { key: spawned.key })).body?.imported ?? 0, { timeout: 30_000, interval: 50 })
        .toBeGreaterThanOrEqual(500);
      await spawned.kill();
      // The client saw no answer.
      expect(await first).toBeInstanceOf(Error);

      url = await spawned.start();
      const status = await call(url, 'GET', `${IMPORT}/big-import`, { key: spawned.key });
      expect(status.body).toMatchObject({ complete: false, total: 3000, skipped: 0 });
      const { imported } = status.body;
      expect(imported % 100).toBe(0);
      expect(imported).toBeGreaterThanOrEqual(500);
      expect(imported).toBeLessThan(3000);
      expect(status.body.pending).toBe(3000 - imported);

      const embedded = embeddings.requests.length;
      const retry = await call(url, 'POST', IMPORT, { key: spawned.key, rawBody: body, headers });
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ complete: true, imported: 3000, skipped: 0, pending: 0 });
      // The retry embedded only what was left.
      expect(embeddings.requests.length - embedded).toBe((3000 - imported) / 100);
      const stats = await call(url, 'GET', '/v1/memory/admin/stats', { key: spawned.key });
      expect(stats.body.memories).toBe(3000);
      const texts = new Set<string>();
      for (let offset = 0; ; offset += 200) {
        const page = await call(url, 'GET', `/v1/memory/collections/imported/memories?limit=200&offset=${offset}`, { key: spawned.key });
        for (const m of page.body as Array<{ text: string }>) texts.add(m.text);
        if (page.body.length < 200) break;
      }
      expect(texts.size).toBe(3000);
    } finally {
      await spawned.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../host/tasks.ts';
import { IMPORT_TRIES } from '../src/services/memory/import.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from './fakes/embeddings-server.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { IMPORT, importAndWait } from './support/imports.ts';
import { startServer, type TestServer } from './support/server.ts';
import { spawnedServer } from './support/spawned-server.ts';
import { trpcClient } from './support/transports.ts';

/**
 * Imports run as background jobs: the answer at once (202), the records stored by the job in
 * steps of 100, each committed with the import's counts, so that a retry, a failing step or a
 * killed process stores every record once.
 */
const items = (n: number, tag = 'item') => Array.from({ length: n }, (_, i) => ({ text: `${tag} ${i}`, collection: 'imported' }));
const count = async (t: Tenant) => (await t.api('GET', '/v1/memory/admin/stats')).body.memories as number;
const texts = async (server: TestServer, t: Tenant) =>
  (await server.app.db.query<{ text: string }>('select text from memories where tenant_id = $1', [t.id])).map((r) => r.text).sort();

describe('imports with an idempotency key', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  });
  afterAll(() => server?.close());
  const send = (t: Tenant, body: unknown, key?: string) =>
    call(server.url, 'POST', IMPORT, { key: t.key, body, headers: key ? { 'idempotency-key': key } : {} });
  const settled = (t: Tenant, body: unknown, key?: string) => importAndWait(server.url, t.key, { body, headers: key ? { 'idempotency-key': key } : {} });

  it('answers 202 at once with the import queued; the job stores it; the same key and body answers the same import, storing nothing twice', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: [...items(250), { text: '' }] };
    const sent = await send(t, body, 'import-1');
    expect(sent.status).toBe(202);
    // Read and validated at once: the bad item is counted before the job runs.
    expect(sent.body).toMatchObject({ idempotency_key: 'import-1', state: 'queued', complete: false, error: null, total: 251, imported: 0, skipped: 1 });
    expect(sent.body.pending).toBe(250);
    expect(sent.body.errors).toEqual([{ index: 250, detail: expect.stringMatching(/text/) }]);

    const first = await settled(t, body, 'import-1');
    expect(first.body).toMatchObject({ import_id: sent.body.import_id, state: 'done', complete: true, error: null, imported: 250, skipped: 1, pending: 0 });
    const again = await send(t, body, 'import-1');
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(await count(t)).toBe(250);

    // The status, by the key or by the id.
    for (const ref of ['import-1', first.body.import_id]) expect((await t.api('GET', `${IMPORT}/${ref}`)).body).toEqual(first.body);
    // tRPC callers send the key as a field.
    const viaTrpc = await trpcClient(server.url, t.key).admin.import.mutate({ ...body, idempotency_key: 'import-1' });
    expect(viaTrpc).toEqual(first.body);
    expect(await count(t)).toBe(250);
    // The staged records are gone once the import is done.
    expect(await server.app.db.query('select 1 from import_records where tenant_id = $1', [t.id])).toEqual([]);
  });

  it('refuses the same key with another body (422) and answers 404 for an unknown import', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await settled(t, { memories: items(3) }, 'k')).body.state).toBe('done');
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
    expect((await settled(stranger, { memories: items(4) }, 'k')).body).toMatchObject({ imported: 4 });
  });

  it('imports without a key as well: each request a new import', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const a = await settled(t, { memories: items(2) });
    const b = await settled(t, { memories: items(2) });
    expect(a.body).toMatchObject({ idempotency_key: null, imported: 2, complete: true });
    expect(b.body.import_id).not.toBe(a.body.import_id);
    expect(await count(t)).toBe(4);
  });

  it('runs one import once when the same key is sent twice at the same time', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: items(600) };
    const [a, b] = await Promise.all([send(t, body, 'twice'), send(t, body, 'twice')]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.import_id).toBe(b.body.import_id);
    expect((await settled(t, body, 'twice')).body).toMatchObject({ complete: true, imported: 600 });
    expect(await count(t)).toBe(600);
  });
});

describe('an import whose job is tried by hand (no worker)', () => {
  let embeddings: FakeEmbeddings;
  let server: TestServer;
  let failing = (_n: number) => false;
  let last = -1;
  beforeAll(async () => {
    embeddings = await startFakeEmbeddings({
      fails: (n) => {
        last = n;
        return failing(n);
      },
    });
    server = await startServer({ ORGMEM_EMBEDDINGS_BASE_URL: embeddings.url, ORGMEM_EMBEDDINGS_DIMENSIONS: '64' }, { worker: false });
  });
  afterAll(async () => {
    await server?.close();
    await embeddings?.close();
  });
  const task = () => tasks.find((x) => x.name === 'import')!;
  const run = (t: Tenant, importId: string, attempt: number) =>
    task()
      .run(server.app, { tenant_id: t.id, import_id: importId }, { attempt, maxAttempts: IMPORT_TRIES })
      .then(
        () => null,
        (err: unknown) => err as Error,
      );
  /** Fails the embedder from the `from`-th request on (counted from now), for `n` requests: the client's retries included. */
  const failFor = (from: number, n: number) => {
    const start = last + 1 + from;
    failing = (now) => now >= start && now < start + n;
  };

  it('a step whose embedder fails is retried from where it stopped; the error is visible meanwhile; nothing skipped, nothing twice', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: items(500) };
    const sent = await call(server.url, 'POST', IMPORT, { key: t.key, body, headers: { 'idempotency-key': 'flaky' } });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ state: 'queued', pending: 500 });
    // The third step's request fails, with both of the client's retries.
    failFor(2, 3);
    expect(await run(t, sent.body.import_id, 1)).toBeInstanceOf(Error);
    const stopped = (await t.api('GET', `${IMPORT}/flaky`)).body;
    expect(stopped).toMatchObject({ state: 'queued', complete: false, imported: 200, skipped: 0, pending: 300, errors: [] });
    expect(stopped.error).toMatch(/^Storing stopped at its record 201 of the valid ones \(try 1 of 5\): the embedder failed: /);

    const embedded = embeddings.requests.length;
    expect(await run(t, sent.body.import_id, 2)).toBeNull();
    expect((await t.api('GET', `${IMPORT}/flaky`)).body).toMatchObject({ state: 'done', complete: true, error: null, imported: 500, pending: 0 });
    // Only the three steps left were embedded.
    expect(embeddings.requests.length - embedded).toBe(3);
    expect(await texts(server, t)).toEqual(
      items(500)
        .map((i) => i.text)
        .sort(),
    );
    // A try run again after the import is done changes nothing.
    expect(await run(t, sent.body.import_id, 3)).toBeNull();
    expect(await count(t)).toBe(500);
  });

  it('fails after its last try with the reason, and the same request queues it again to resume there', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const body = { memories: items(300) };
    const headers = { 'idempotency-key': 'gives-up' };
    const sent = await call(server.url, 'POST', IMPORT, { key: t.key, body, headers });
    failFor(1, 3);
    expect(await run(t, sent.body.import_id, IMPORT_TRIES)).toBeNull();
    const failed = (await t.api('GET', `${IMPORT}/gives-up`)).body;
    expect(failed).toMatchObject({ state: 'failed', complete: false, imported: 100, pending: 200 });
    expect(failed.error).toMatch(/the embedder failed: .*Send the same request with the same Idempotency-Key to resume it there$/);
    // Nothing runs it any more: a try now does nothing.
    expect(await run(t, sent.body.import_id, 1)).toBeNull();
    expect(await count(t)).toBe(100);

    const again = await call(server.url, 'POST', IMPORT, { key: t.key, body, headers });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ import_id: sent.body.import_id, state: 'queued', error: null, imported: 100, pending: 200 });
    expect(await run(t, sent.body.import_id, 1)).toBeNull();
    expect((await t.api('GET', `${IMPORT}/gives-up`)).body).toMatchObject({ state: 'done', imported: 300, pending: 0 });
    expect(await texts(server, t)).toEqual(
      items(300)
        .map((i) => i.text)
        .sort(),
    );
  });

  it('an import whose key is revoked before its job runs fails with the reason and stores nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const admin = await t.newKey('importer', false, 'admin');
    const sent = await call(server.url, 'POST', IMPORT, { key: admin.key, body: { memories: items(3) } });
    expect(sent.status).toBe(202);
    expect((await t.api('DELETE', `/v1/memory/keys/${admin.id}`)).status).toBe(204);
    expect(await run(t, sent.body.import_id, 1)).toBeNull();
    const status = (await t.api('GET', `${IMPORT}/${sent.body.import_id}`)).body;
    expect(status).toMatchObject({ state: 'failed', imported: 0, pending: 3 });
    expect(status.error).toMatch(/The API key "importer" has been revoked/);
    expect(await count(t)).toBe(0);
  });

  it('a collection whose grant is taken from the key before the job runs has its records skipped with the reason', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const admin = await t.newKey('importer', false, 'admin');
    const sent = await call(server.url, 'POST', IMPORT, {
      key: admin.key,
      body: { memories: [{ text: 'kept', collection: 'open' }, ...items(2)] },
    });
    // The collection becomes restricted to another key after the import was accepted.
    expect((await t.api('POST', '/v1/memory/collections', { name: 'imported' })).status).toBe(201);
    const other = await t.newKey('other');
    expect((await t.api('PUT', '/v1/memory/collections/imported/grants', { agent_key_id: other.id, can_read: true, can_write: true })).status).toBe(200);
    expect(await run(t, sent.body.import_id, 1)).toBeNull();
    expect((await t.api('GET', `${IMPORT}/${sent.body.import_id}`)).body).toMatchObject({
      state: 'done',
      imported: 1,
      skipped: 2,
      errors: [1, 2].map((index) => ({ index, detail: 'this API key may not write collection "imported"' })),
    });
  });
});

describe('an import whose server process is killed mid-way', () => {
  let embeddings: FakeEmbeddings;
  beforeAll(async () => {
    // 200 ms a step of 100 memories: the 3,000 take 6 s, long enough to be killed in the middle.
    embeddings = await startFakeEmbeddings({ delayMs: 200 });
  });
  afterAll(() => embeddings?.close());

  it('goes on by itself after a restart, each record stored once', { timeout: 120_000 }, async () => {
    const spawned = await spawnedServer(
      { ORGMEM_EMBEDDINGS_BASE_URL: embeddings.url, ORGMEM_EMBEDDINGS_DIMENSIONS: '64', ORGMEM_WORKER_HEARTBEAT_SECONDS: '1' },
      { worker: true },
    );
    try {
      let url = await spawned.start();
      const body = JSON.stringify({ memories: items(3000) });
      const sent = await call(url, 'POST', IMPORT, { key: spawned.key, rawBody: body, headers: { 'idempotency-key': 'big-import' } });
      expect(sent.status).toBe(202);
      await expect
        .poll(async () => (await call(url, 'GET', `${IMPORT}/big-import`, { key: spawned.key })).body?.imported ?? 0, { timeout: 30_000, interval: 50 })
        .toBeGreaterThanOrEqual(500);
      await spawned.kill();

      const left = await spawned.read(async (app) => {
        const [row] = await app.db.query<{ processed: number; imported: number; state: string }>(
          'select processed, imported, state from imports where tenant_id = $1',
          [spawned.tenantId],
        );
        return row!;
      });
      expect(left.state).toBe('running');
      expect(left.imported % 100).toBe(0);
      expect(left.imported).toBeGreaterThanOrEqual(500);
      expect(left.imported).toBeLessThan(3000);

      const embedded = embeddings.requests.length;
      url = await spawned.start();
      await expect
        .poll(async () => (await call(url, 'GET', `${IMPORT}/big-import`, { key: spawned.key })).body?.state, { timeout: 60_000, interval: 250 })
        .toBe('done');
      const status = await call(url, 'GET', `${IMPORT}/big-import`, { key: spawned.key });
      expect(status.body).toMatchObject({ complete: true, imported: 3000, skipped: 0, pending: 0 });
      // The restart embedded only what was left.
      expect(embeddings.requests.length - embedded).toBe((3000 - left.imported) / 100);
      const stats = await call(url, 'GET', '/v1/memory/admin/stats', { key: spawned.key });
      expect(stats.body.memories).toBe(3000);
      const seen = new Set<string>();
      for (let offset = 0; ; offset += 200) {
        const page = await call(url, 'GET', `/v1/memory/collections/imported/memories?limit=200&offset=${offset}`, { key: spawned.key });
        for (const m of page.body as Array<{ text: string }>) seen.add(m.text);
        if (page.body.length < 200) break;
      }
      expect(seen.size).toBe(3000);
    } finally {
      await spawned.close();
    }
  });
});

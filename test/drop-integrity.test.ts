import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crontab, tasks } from '../host/tasks.ts';
import { ABANDONED } from '../src/ports/jobs/jobs.ts';
import { storeFor } from '../src/services/storage/tenant-store.ts';
import { abandonIngestFile } from '../src/services/files/ingest-run.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from './fakes/embeddings-server.ts';
import { startFakeS3, type FakeS3 } from './fakes/s3.ts';
import { call as request, newTenant, type Tenant } from './support/client.ts';
import { importAndWait } from './support/imports.ts';
import { startServer, type TestServer } from './support/server.ts';
import { spawnedServer } from './support/spawned-server.ts';
import { postForm, type JsonFile } from './support/transports.ts';

const file = (filename: string, text: string): JsonFile => ({ filename, content_type: 'text/plain', data: Buffer.from(text).toString('base64') });
const C = (collection: string) => `/v1/memory/collections/${collection}`;

describe.each(['local', 's3'] as const)('presigned uploads with the %s store', (kind) => {
  let s3: FakeS3 | undefined;
  let server: TestServer;
  let t: Tenant;
  beforeAll(async () => {
    if (kind === 's3') s3 = await startFakeS3(['platform-files']);
    server = await startServer({ ORGMEM_EMBEDDER: 'hash', ...s3?.env('platform-files') });
    t = await newTenant(server.url, server.adminKey);
  });
  afterAll(async () => {
    await server?.close();
    await s3?.close();
  });

  const presign = async (collection: string, filename: string) => {
    const res = await t.api('POST', `${C(collection)}/drop/presign`, [{ filename, content_type: 'text/plain', size: 30 }]);
    expect(res.status).toBe(200);
    return res.body.uploads[0] as { key: string; url: string; headers: Record<string, string> };
  };
  const put = (u: { url: string; headers: Record<string, string> }, text: string) => fetch(u.url, { method: 'PUT', headers: u.headers, body: text });
  const complete = (collection: string, key: string) =>
    t.api('POST', `${C(collection)}/drop/complete`, [{ key, filename: 'memo.txt', mime: 'text/plain', size: 30 }]);
  const batchOf = async (id: string) => {
    await expect.poll(async () => (await t.api('GET', `/v1/memory/ingest/batch/${id}`)).body.complete, { timeout: 15_000 }).toBe(true);
    return (await t.api('GET', `/v1/memory/ingest/batch/${id}`)).body;
  };

  // A URL writes once. The local store refuses a second PUT (409); S3 refuses it itself (412) for
  // the If-None-Match: * signed into the URL. s3rver, the fake, honours neither that header nor a
  // signed header left out, so on S3 the test checks the URL asks for the condition.
  it('an upload URL writes once: a second PUT, before or after complete, cannot change the file the memory was made from', async () => {
    const u = await presign('once', 'memo.txt');
    if (kind === 's3') {
      expect(new URL(u.url).searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('if-none-match');
      expect(u.headers['if-none-match']).toBe('*');
      return;
    }
    expect((await put(u, 'The first version of the memo.')).status).toBe(200);
    const early = await put(u, 'A second version, before complete.');
    expect(early.status).toBe(409);
    const done = await complete('once', u.key);
    expect(done.status).toBe(202);
    const batch = await batchOf(done.body.batch_id);
    expect(batch).toMatchObject({ done: 1, failed: 0 });
    const late = await put(u, 'A third version, after complete.');
    expect(late.status).toBe(409);
    expect((await late.json()).detail).toMatch(/already uploaded at this key/);
    // The stored bytes are the memory's.
    const memory = (await t.api('GET', `${C('once')}/memories/${batch.files[0].memory_ids[0]}`)).body;
    expect(memory.text).toBe('The first version of the memo.');
    expect((await server.app.blobs.get(u.key))?.body.toString()).toBe('The first version of the memo.');
  });

  it('complete takes a key once: the second complete is a 409 naming the batch, and one memory is made', async () => {
    const u = await presign('twice', 'memo.txt');
    await put(u, 'Completed twice, stored once.');
    const first = await complete('twice', u.key);
    expect(first.status).toBe(202);
    const second = await complete('twice', u.key);
    expect(second.status).toBe(409);
    expect(second.body.detail).toBe(`The key ${JSON.stringify(u.key)} was already completed: its file is in ingest batch ${first.body.batch_id}`);
    await batchOf(first.body.batch_id);
    const memories = (await t.api('GET', `${C('twice')}/memories`)).body as Array<{ text: string }>;
    expect(memories.map((m) => m.text)).toEqual(['Completed twice, stored once.']);
  });

  it("complete refuses keys presign did not issue: a sync drop's file, another collection's key (400, nothing queued)", async () => {
    const dropped = await postForm(server.url, t.key, `${C('dropped')}/drop`, { files: [file('kept.txt', 'Dropped and read at once.')] });
    expect(dropped.status).toBe(201);
    const key = dropped.body.files[0].key as string;
    const again = await complete('dropped', key);
    expect(again.status).toBe(400);
    expect(again.body.detail).toBe(`The key ${JSON.stringify(key)} was not issued by presign for this collection (use the keys presign answered)`);
    // A key issued for another collection is outside this one's namespace.
    const u = await presign('elsewhere', 'memo.txt');
    await put(u, 'Uploaded for another collection.');
    expect((await complete('dropped', u.key)).status).toBe(400);
    // A made-up key in the namespace was never issued.
    const madeUp = `${t.id}/dropped/00000000-0000-4000-8000-000000000000/x.txt`;
    expect((await complete('dropped', madeUp)).body.detail).toMatch(/was not issued by presign/);
    const memories = (await t.api('GET', `${C('dropped')}/memories`)).body as Array<{ text: string }>;
    expect(memories.map((m) => m.text)).toEqual(['Dropped and read at once.']);
  });
});

/** Every file under the local store's directory, as keys. */
function storedKeys(dir: string): string[] {
  const objects = join(dir, 'objects');
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [relative(objects, join(d, e.name))]));
  try {
    return walk(objects);
  } catch {
    return [];
  }
}

describe('a sync drop whose server process is killed mid-way', () => {
  let embeddings: FakeEmbeddings;
  beforeAll(async () => {
    // Each file is one embedding call of 400 ms: 20 files take 8 s, long enough to be killed in the middle.
    embeddings = await startFakeEmbeddings({ delayMs: 400 });
  });
  afterAll(() => embeddings?.close());

  it('leaves a batch that accounts for every stored file, and the worker ingests the rest after a restart', { timeout: 120_000 }, async () => {
    const spawned = await spawnedServer(
      { ORGMEM_EMBEDDINGS_BASE_URL: embeddings.url, ORGMEM_EMBEDDINGS_DIMENSIONS: '64', ORGMEM_SYNC_DROP_RESUME_SECONDS: '2' },
      { worker: true },
    );
    try {
      let url = await spawned.start();
      const files = Array.from({ length: 20 }, (_, i) => file(`file-${i}.txt`, `File number ${i} of the drop.`));
      const count = () => stats(url, spawned.key);
      const drop = postForm(url, spawned.key, `${C('dropped')}/drop`, { files }).catch((err: Error) => err);
      await expect.poll(count, { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(5);
      await spawned.kill();
      expect(await drop).toBeInstanceOf(Error);

      const storage = await spawned.read(async (app) => {
        const batches = await app.db.query<{ id: string }>('select id from ingest_batches where tenant_id = $1', [spawned.tenantId]);
        const rows = await app.db.query<{ key: string; state: string; stored: number }>(
          'select key, state, jsonb_array_length(memory_ids) as stored from ingest_files where tenant_id = $1',
          [spawned.tenantId],
        );
        return { dir: app.config.storage.dir!, batches, rows };
      });
      // One batch, recorded before the files were read: every file has its row, some stored, the rest still to do.
      // A file's memories and its row's list of them are written together; its state becomes done just after, so
      // the kill may fall between the two: what was stored is counted by the list.
      expect(storage.batches).toHaveLength(1);
      expect(storage.rows).toHaveLength(20);
      const stored = storage.rows.filter((r) => r.stored > 0).length;
      expect(stored).toBeGreaterThanOrEqual(5);
      expect(storage.rows.filter((r) => r.state === 'done').length).toBeLessThan(20);
      // No stored file outside the batch.
      const rowKeys = new Set(storage.rows.map((r) => r.key));
      for (const key of storedKeys(storage.dir)) expect(rowKeys).toContain(key);

      url = await spawned.start();
      const batchId = storage.batches[0]!.id;
      await expect
        .poll(async () => (await call(url, spawned.key, `/v1/memory/ingest/batch/${batchId}`)).complete, { timeout: 60_000, interval: 250 })
        .toBe(true);
      const batch = await call(url, spawned.key, `/v1/memory/ingest/batch/${batchId}`);
      expect(batch).toMatchObject({ total: 20, done: 20, failed: 0 });
      // Each file once: one memory per file, its text the file's.
      const memories = (await call(url, spawned.key, `${C('dropped')}/memories?limit=200`)) as Array<{ text: string; metadata: { key: string } }>;
      expect(memories.map((m) => m.text).sort()).toEqual(files.map((_, i) => `File number ${i} of the drop.`).sort());
      expect(new Set(memories.map((m) => m.metadata.key))).toEqual(rowKeys);
    } finally {
      await spawned.close();
    }
  });
});

const call = async (url: string, key: string, path: string) => (await fetch(url + path, { headers: { authorization: `Bearer ${key}` } })).json();
const stats = async (url: string, key: string) => ((await call(url, key, '/v1/memory/admin/stats')) as { memories: number }).memories;

describe('a file whose last try a crash cut short', () => {
  it('fails with the reason, and the chunks that try stored are deleted with it', async () => {
    const server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
    try {
      const t = await newTenant(server.url, server.adminKey);
      const drop = await postForm(server.url, t.key, `${C('cut')}/drop`, {
        async_ingest: 'true',
        files: [file('long.txt', 'The tide tables of the harbour.')],
      });
      expect(drop.status).toBe(202);
      const batchId = drop.body.batch_id as string;
      // What a try killed mid-way leaves: its first chunks stored and listed on the file, still processing.
      const ids = (await t.api('POST', `${C('cut')}/memories/bulk`, [{ text: 'chunk one of long.txt' }, { text: 'chunk two of long.txt' }])).body
        .ids as string[];
      const [cut] = await server.app.db.query<{ key: string }>(
        `update ingest_files set state = 'processing', memory_ids = $3::jsonb, chunks = 2 where tenant_id = $1 and batch_id = $2 returning key`,
        [t.id, batchId, ids],
      );
      // What the queue calls for a job whose last try its worker did not live through (host/tasks.ts).
      await abandonIngestFile(server.app, t.id, batchId, cut!.key, ABANDONED);
      const batch = (await t.api('GET', `/v1/memory/ingest/batch/${batchId}`)).body;
      expect(batch).toMatchObject({ complete: true, failed: 1 });
      expect(batch.files[0]).toMatchObject({ state: 'failed', error: ABANDONED, chunks: 0, memory_ids: [] });
      for (const id of ids) expect((await t.api('GET', `${C('cut')}/memories/${id}`)).status, id).toBe(404);
      // Settled: a second call changes nothing.
      await abandonIngestFile(server.app, t.id, batchId, cut!.key, 'another reason');
      expect((await t.api('GET', `/v1/memory/ingest/batch/${batchId}`)).body.files[0].error).toBe(ABANDONED);
    } finally {
      await server.close();
    }
  });
});

describe('an async drop', () => {
  it('queues one job per file, due now: the resume job recorded with the batch is the same job, moved', async () => {
    const server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
    try {
      const t = await newTenant(server.url, server.adminKey);
      const drop = await postForm(server.url, t.key, `${C('later')}/drop`, { async_ingest: 'true', files: [file('a.txt', 'first'), file('b.txt', 'second')] });
      expect(drop.status).toBe(202);
      const jobs = await server.app.db.query<{ key: string; due: boolean }>(
        server.app.db.kind === 'pglite'
          ? `select payload->>'key' as key, run_at <= now() as due from jobs where task = 'ingest_file' and payload->>'batch_id' = $1 order by 1`
          : `select j.payload->>'key' as key, j.run_at <= now() as due from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
              where k.identifier = 'ingest_file' and j.payload->>'batch_id' = $1 order by 1`,
        [drop.body.batch_id],
      );
      expect(jobs).toHaveLength(2);
      expect(jobs.every((j) => j.due)).toBe(true);
      expect(new Set(jobs.map((j) => j.key)).size).toBe(2);
    } finally {
      await server.close();
    }
  });
});

describe('the writes sweep', () => {
  it('drops import records a week after their last step, remember keys a week after their remember, and presigned keys no complete took within a day, with their uploaded files', async () => {
    const server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
    try {
      const t = await newTenant(server.url, server.adminKey);
      const db = server.app.db;
      const imported = (key: string) => t.api('GET', `/v1/memory/admin/import/${key}`);
      for (const key of ['old-import', 'new-import']) {
        const res = await importAndWait(server.url, t.key, { body: { memories: [{ text: key }] }, headers: { 'idempotency-key': key } });
        expect(res.body.state).toBe('done');
      }
      await db.query(`update imports set updated_at = now() - interval '8 days' where tenant_id = $1 and idempotency_key = 'old-import'`, [t.id]);
      const remember = (key: string, content: string) =>
        request(server.url, 'POST', `${C('swept')}/remember`, { key: t.key, body: { content }, headers: { 'idempotency-key': key } });
      for (const key of ['old-remember', 'new-remember']) expect((await remember(key, key)).status).toBe(202);
      await db.query(`update remember_keys set created_at = now() - interval '8 days' where tenant_id = $1 and idempotency_key = 'old-remember'`, [t.id]);
      // Two keys presigned, one uploaded to and never completed, one completed; then both a day old.
      const presign = async (filename: string) =>
        (await t.api('POST', `${C('swept')}/drop/presign`, [{ filename, content_type: 'text/plain', size: 20 }])).body.uploads[0] as {
          key: string;
          url: string;
          headers: Record<string, string>;
        };
      const [abandoned, completed] = [await presign('abandoned.txt'), await presign('completed.txt')];
      for (const u of [abandoned, completed])
        expect((await fetch(u.url, { method: 'PUT', headers: u.headers, body: 'twenty bytes of text' })).status).toBe(200);
      expect(
        (await t.api('POST', `${C('swept')}/drop/complete`, [{ key: completed.key, filename: 'completed.txt', mime: 'text/plain', size: 20 }])).status,
      ).toBe(202);
      await db.query(`update presigned_uploads set created_at = now() - interval '25 hours' where tenant_id = $1`, [t.id]);

      expect(crontab).toContainEqual({ task: 'writes_sweep', match: '23 * * * *' });
      await tasks.find((task) => task.name === 'writes_sweep')!.run(server.app, {}, { attempt: 1, maxAttempts: 1 });

      expect((await imported('old-import')).status).toBe(404);
      expect((await imported('new-import')).body).toMatchObject({ complete: true, imported: 1 });
      const rememberKeys = await db.query<{ idempotency_key: string }>('select idempotency_key from remember_keys where tenant_id = $1', [t.id]);
      expect(rememberKeys.map((k) => k.idempotency_key)).toEqual(['new-remember']);
      // The dropped key is free again: other text under it is a new remember, no longer a 422.
      expect((await remember('old-remember', 'other text')).status).toBe(202);
      expect((await remember('new-remember', 'other text')).status).toBe(422);
      const keys = await db.query<{ key: string }>('select key from presigned_uploads where tenant_id = $1', [t.id]);
      expect(keys.map((k) => k.key)).toEqual([completed.key]);
      // The file uploaded at the dropped key leaves the store (its cleanup job runs on the worker); the completed one stays.
      const store = await storeFor(server.app, t.id);
      await expect.poll(async () => (await store.get(abandoned.key)) === null, { timeout: 15_000 }).toBe(true);
      expect(await store.get(completed.key)).not.toBeNull();
    } finally {
      await server.close();
    }
  });
});

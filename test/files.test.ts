import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../host/tasks.ts';
import type { BlobStore } from '../src/ports/blobs/blobs.ts';
import type { JobMeta } from '../src/ports/jobs/jobs.ts';
import { MAX_FILE_BYTES } from '../src/schemas/files.ts';
import { ingestJob } from '../src/services/files/batches.ts';
import { storeFor } from '../src/services/storage/tenant-store.ts';
import { startFakeS3, type FakeS3 } from './fakes/s3.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { corruptPdf, csv, docx, html, pdf } from './support/documents.ts';
import { startServer, type TestServer } from './support/server.ts';
import { postForm, type JsonFile } from './support/transports.ts';
import { until } from './support/until.ts';

/**
 * Files end to end over real HTTP: uploads, folder, attached files, sync and async drop,
 * presigned uploads, and files leaving the store with what they belong to. Run once with the
 * local store (the embedded default) and once with the platform store on S3 (s3rver).
 */
const file = (filename: string, content_type: string, data: Buffer | string): JsonFile => ({
  filename,
  content_type,
  data: Buffer.from(data).toString('base64'),
});
const oversize = () => file('huge.txt', 'text/plain', Buffer.alloc(MAX_FILE_BYTES + 1, 'a'));

describe.each(['local', 's3'] as const)('files with the %s store', (kind) => {
  let s3: FakeS3 | undefined;
  let server: TestServer;
  let t: Tenant;
  let other: Tenant;
  let store: BlobStore;
  const C = (collection: string) => `/v1/memory/collections/${collection}`;
  const form = (path: string, fields: Record<string, unknown>, key = t.key) => postForm(server.url, key, path, fields);
  const batchDone = (id: string) =>
    until(`batch ${id}`, async () => {
      const res = await t.api('GET', `/v1/memory/ingest/batch/${id}`);
      expect(res.status).toBe(200);
      return res.body.complete ? res.body : undefined;
    });

  beforeAll(async () => {
    let env: Record<string, string> = {};
    if (kind === 's3') {
      s3 = await startFakeS3(['platform-files']);
      env = s3.env('platform-files');
    }
    server = await startServer(env);
    t = await newTenant(server.url, server.adminKey);
    other = await newTenant(server.url, server.adminKey);
    store = await storeFor(server.app, t.id);
  });
  afterAll(async () => {
    await server?.close();
    await s3?.close();
  });

  it('sync drop reads each file into chunked memories; a corrupt or oversize file fails alone', async () => {
    const res = await form(`${C('docs')}/drop`, {
      files: [
        file('report.pdf', 'application/pdf', await pdf(['Quarterly report', 'The lighthouse budget grew by nine percent.'])),
        file(
          'notes.docx',
          'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
          await docx(['Meeting notes', 'Alice sends the harbour survey on Friday.']),
        ),
        file('page.html', 'text/html', html('<h1>Ferries</h1><p>The night ferry leaves at 23:40.</p><script>evil()</script>')),
        file(
          'tides.csv',
          'text/csv',
          csv([
            ['day', 'high tide'],
            ['Monday', '06:12'],
          ]),
        ),
        file('broken.pdf', 'application/pdf', corruptPdf()),
        oversize(),
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ stored: 4, failed: 2 });
    const byName = Object.fromEntries(res.body.files.map((f: { filename: string }) => [f.filename, f]));
    expect(byName['report.pdf']).toMatchObject({ status: 'stored', chunks: 1 });
    expect(byName['report.pdf'].preview).toContain('lighthouse budget grew');
    expect(byName['page.html'].preview).not.toContain('evil');
    expect(byName['broken.pdf']).toMatchObject({ status: 'failed', memory_ids: [], chunks: 0 });
    expect(byName['broken.pdf'].detail).toEqual(expect.any(String));
    expect(byName['huge.txt']).toMatchObject({ status: 'failed', key: null });
    expect(byName['huge.txt'].detail).toMatch(/10 MB/);

    const memory = await t.api('GET', `${C('docs')}/memories/${byName['notes.docx'].memory_ids[0]}`);
    expect(memory.body).toMatchObject({
      category: 'document',
      source: 'drop',
      metadata: { file: 'notes.docx', chunk: 1, chunks: 1, key: byName['notes.docx'].key },
    });
    expect(memory.body.text).toContain('harbour survey');
    expect(await store.head(byName['notes.docx'].key)).toMatchObject({ size: expect.any(Number) });

    const found = await t.api('POST', `${C('docs')}/search`, { query: 'when does the night ferry leave' });
    expect(found.body.results[0].text).toContain('23:40');
  });

  it('a long file becomes several chunks that all lead back to it', async () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} about the tide gauge at pier ${i}. `.repeat(6));
    const res = await form(`${C('long')}/drop`, { files: [file('long.txt', 'text/plain', paragraphs.join('\n\n'))] });
    const [entry] = res.body.files;
    expect(entry.chunks).toBeGreaterThan(3);
    const list = await t.api('GET', `${C('long')}/memories?limit=200`);
    const chunks = list.body.filter((m: { metadata: { key?: string } }) => m.metadata.key === entry.key);
    expect(chunks).toHaveLength(entry.chunks);
    expect(chunks.map((m: { metadata: { chunk: number } }) => m.metadata.chunk).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: entry.chunks }, (_, i) => i + 1),
    );
    expect(chunks.every((m: { text: string }) => m.text.length <= 2000)).toBe(true);
  });

  it('async drop answers a batch at once; the worker reads the files and a corrupt one fails alone', async () => {
    const res = await form(`${C('queued')}/drop?async_ingest=true`, {
      files: [file('a.txt', 'text/plain', 'The pilot boat is painted orange.'), file('broken.pdf', 'application/pdf', corruptPdf()), oversize()],
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ queued: 2, failed: [{ filename: 'huge.txt' }] });
    const batch = await batchDone(res.body.batch_id);
    expect(batch).toMatchObject({ total: 2, done: 1, failed: 1, pending: 0, complete: true, collection: 'queued' });
    const broken = batch.files.find((f: { filename: string }) => f.filename === 'broken.pdf');
    expect(broken.error).toEqual(expect.any(String));
    const good = batch.files.find((f: { filename: string }) => f.filename === 'a.txt');
    expect(good).toMatchObject({ state: 'done', chunks: 1 });
    const memory = await t.api('GET', `${C('queued')}/memories/${good.memory_ids[0]}`);
    expect(memory.body.text).toBe('The pilot boat is painted orange.');
    // Batches are the tenant's own.
    expect((await other.api('GET', `/v1/memory/ingest/batch/${res.body.batch_id}`)).status).toBe(404);
    expect((await t.api('GET', '/v1/memory/ingest/batch/not-a-uuid')).status).toBe(404);
  });

  it('presign, PUT with fetch, complete: the batch ingests what was uploaded', async () => {
    const presign = await t.api('POST', `${C('direct')}/drop/presign`, [
      { filename: 'memo.txt', content_type: 'text/plain', size: 40 },
      { filename: 'huge.bin', content_type: 'application/octet-stream', size: MAX_FILE_BYTES + 1 },
      { filename: 'never.txt', content_type: 'text/plain', size: 10 },
    ]);
    expect(presign.status).toBe(200);
    const [memo, huge, never] = presign.body.uploads;
    expect(huge).toEqual({ filename: 'huge.bin', error: expect.stringMatching(/10 MB/) });
    expect(memo.key).toMatch(new RegExp(`^${t.id}/direct/[0-9a-f-]{36}/memo\\.txt$`));
    expect(new Date(memo.expires_at).getTime()).toBeGreaterThan(Date.now());
    expect(memo.headers).toEqual({ 'content-type': 'text/plain', 'if-none-match': '*' });
    const put = await fetch(memo.url, { method: 'PUT', headers: memo.headers, body: 'The breakwater light flashes every 5 s.' });
    expect(put.status).toBe(200);

    const foreign = await other.api('POST', `${C('direct')}/drop/complete`, [{ key: memo.key, filename: 'memo.txt', mime: 'text/plain', size: 40 }]);
    expect(foreign.status).toBe(400);

    const complete = await t.api('POST', `${C('direct')}/drop/complete`, [
      { key: memo.key, filename: 'memo.txt', mime: 'text/plain', size: 40 },
      { key: never.key, filename: 'never.txt', mime: 'text/plain', size: 10 },
    ]);
    expect(complete.status).toBe(202);
    expect(complete.body).toMatchObject({ queued: 1, rejected: [{ key: never.key, detail: expect.stringMatching(/uploaded/) }] });
    const batch = await batchDone(complete.body.batch_id);
    expect(batch).toMatchObject({ total: 1, done: 1 });
    const again = await t.api('POST', `${C('direct')}/drop/complete`, [{ key: memo.key, filename: 'memo.txt', mime: 'text/plain', size: 40 }]);
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(new RegExp(`already completed: its file is in ingest batch ${complete.body.batch_id}`));
    const list = await t.api('GET', `${C('direct')}/memories`);
    expect(list.body.map((m: { text: string }) => m.text)).toEqual(['The breakwater light flashes every 5 s.']);
  });

  it('upload makes one memory with its files; single GET presigns them, lists do not', async () => {
    const res = await form(`${C('uploads')}/memories/upload`, {
      files: [file('plan.html', 'text/html', html('<p>Dredging starts in March.</p>')), file('data.json', 'application/json', '{"depth": 12}')],
      importance: '0.8',
      metadata: JSON.stringify({ project: 'dredging' }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ importance: 0.8, category: 'document', source: 'upload', metadata: { project: 'dredging' } });
    expect(res.body.text).toContain('Dredging starts in March.');
    expect(res.body.text).toContain('"depth": 12');
    expect(res.body.images.map((i: { index: number; filename: string }) => [i.index, i.filename])).toEqual([
      [0, 'plan.html'],
      [1, 'data.json'],
    ]);
    expect(res.body.images[0].url).toEqual(expect.stringMatching(/^http/));
    const got = await t.api('GET', `${C('uploads')}/memories/${res.body.id}`);
    const download = await fetch(got.body.images[1].url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('{"depth": 12}');
    const list = await t.api('GET', `${C('uploads')}/memories`);
    expect(list.body[0].images[0].url).toBeNull();

    const withText = await form(`${C('uploads')}/memories/upload`, {
      text: 'Chart of the inner harbour',
      files: [file('chart.bin', 'application/octet-stream', Buffer.from([0, 1, 2, 3]))],
    });
    expect(withText.status).toBe(201);
    expect(withText.body.text).toBe('Chart of the inner harbour');

    const unreadable = await form(`${C('uploads')}/memories/upload`, { files: [file('x.bin', 'application/octet-stream', Buffer.from([0, 1, 2, 3]))] });
    expect(unreadable.status).toBe(400);
    const big = await form(`${C('uploads')}/memories/upload`, { text: 'too big', files: [oversize()] });
    expect(big.status).toBe(413);
    expect((await form(`${C('uploads')}/memories/upload`, { text: 'no files' })).status).toBe(400);
  });

  it('folder: one memory per file, failures listed, at most 50 files', async () => {
    const res = await form(`${C('folder')}/memories/folder`, {
      files: [
        file('one.md', 'text/markdown', '# Buoys\nRed buoys mark the port side.'),
        file('two.txt', 'text/plain', 'Green buoys mark starboard.'),
        oversize(),
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.created).toBe(2);
    expect(res.body.memories.map((m: { filename: string }) => m.filename)).toEqual(['one.md', 'two.txt']);
    expect(res.body.failed).toEqual([{ filename: 'huge.txt', detail: expect.stringMatching(/10 MB/) }]);
    const tooMany = await form(`${C('folder')}/memories/folder`, { files: Array.from({ length: 51 }, (_, i) => file(`f${i}.txt`, 'text/plain', `file ${i}`)) });
    expect(tooMany.status).toBe(422);
    const dropTooMany = await form(`${C('folder')}/drop`, { files: Array.from({ length: 51 }, (_, i) => file(`f${i}.txt`, 'text/plain', `file ${i}`)) });
    expect(dropTooMany.status).toBe(422);
  });

  it('drop and folder where no file can be stored: 422 naming each file, and nothing kept', async () => {
    const unstorable = () => [file('broken.pdf', 'application/pdf', corruptPdf()), oversize()];
    const expectRefused = (res: { status: number; body: { detail: string; errors: Array<{ path: string; message: string }> } }) => {
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([
        { path: 'files.0', message: expect.stringMatching(/^broken\.pdf: The PDF could not be read/) },
        { path: 'files.1', message: `huge.txt: Larger than ${MAX_FILE_BYTES} bytes (10 MB)` },
      ]);
      expect(res.body.detail).toBe(`No file could be stored: ${res.body.errors[0]!.message} (and 1 more: see errors)`);
    };
    expectRefused(await form(`${C('none-drop')}/drop`, { files: unstorable() }));
    expectRefused(await form(`${C('none-folder')}/memories/folder`, { files: unstorable() }));
    // Async drop reads later: only the size is known now.
    const queued = await form(`${C('none-queued')}/drop?async_ingest=true`, { files: [oversize()] });
    expect(queued.status).toBe(422);
    expect(queued.body.errors).toEqual([{ path: 'files.0', message: `huge.txt: Larger than ${MAX_FILE_BYTES} bytes (10 MB)` }]);
    for (const collection of ['none-drop', 'none-folder', 'none-queued']) {
      // No blob without a memory, no memory, no batch, not even the collection.
      expect(await store.deletePrefix(`${t.id}/${collection}/`), collection).toBe(0);
      expect((await t.api('GET', C(collection))).status, collection).toBe(404);
      const batches = await server.app.db.query('select 1 from ingest_batches where tenant_id = $1 and collection = $2', [t.id, collection]);
      expect(batches, collection).toEqual([]);
    }
    // One file stored is enough for the usual answer, the others listed as failed.
    const partial = await form(`${C('some-drop')}/drop`, { files: [...unstorable(), file('ok.txt', 'text/plain', 'The slipway is closed in March.')] });
    expect(partial.status).toBe(201);
    expect(partial.body).toMatchObject({ stored: 1, failed: 2 });
  });

  it('attach and detach files; a detached file leaves the store', async () => {
    const created = await t.api('POST', `${C('attach')}/memories`, { text: 'Survey of the east pier' });
    const id = created.body.id;
    const first = await form(`${C('attach')}/memories/${id}/images`, { files: [file('a.txt', 'text/plain', 'first')] });
    expect(first.status).toBe(201);
    const second = await form(`${C('attach')}/memories/${id}/images`, { files: [file('b.txt', 'text/plain', 'second')] });
    expect(second.body.images.map((i: { index: number }) => i.index)).toEqual([0, 1]);
    expect(second.body.images[1].url).toEqual(expect.stringMatching(/^http/));
    const keyOfA = (await server.app.db.query<{ images: Array<{ key: string }> }>('select images from memories where id = $1', [id]))[0]!.images[0]!.key;
    expect((await t.api('DELETE', `${C('attach')}/memories/${id}/images/0`)).status).toBe(204);
    expect((await t.api('DELETE', `${C('attach')}/memories/${id}/images/0`)).status).toBe(404);
    const after = await t.api('GET', `${C('attach')}/memories/${id}`);
    expect(after.body.images.map((i: { index: number; filename: string }) => [i.index, i.filename])).toEqual([[1, 'b.txt']]);
    await until('the detached file to leave the store', async () => ((await store.head(keyOfA)) ? undefined : true));
    // Indexes keep counting up: a new file never takes a removed one's index.
    const third = await form(`${C('attach')}/memories/${id}/images`, { files: [file('c.txt', 'text/plain', 'third')] });
    expect(third.body.images.map((i: { index: number }) => i.index)).toEqual([1, 2]);
    expect((await form(`${C('attach')}/memories/00000000-0000-7000-8000-000000000000/images`, { files: [file('a.txt', 'text/plain', 'x')] })).status).toBe(404);
    expect((await form(`${C('attach')}/memories/${id}/images`, { files: [file('a.txt', 'text/plain', 'x')] }, other.key)).status).toBe(404);
  });

  it('files leave the store with their memory, their collection and their account', async () => {
    const owner = await newTenant(server.url, server.adminKey);
    const ownerStore = await storeFor(server.app, owner.id);
    const up = (collection: string, name: string) =>
      postForm(server.url, owner.key, `${C(collection)}/drop`, { files: [file(name, 'text/plain', `The ${name} is in the shed.`)] }).then(
        (r) => r.body.files[0],
      );
    const gone = (key: string) => until(`${key} to leave the store`, async () => ((await ownerStore.head(key)) ? undefined : true));

    const one = await up('keep', 'anchor');
    expect(await ownerStore.head(one.key)).not.toBeNull();
    expect((await owner.api('DELETE', `${C('keep')}/memories/${one.memory_ids[0]}`)).status).toBe(204);
    await gone(one.key);

    const two = await up('doomed', 'rope');
    expect((await owner.api('DELETE', `/v1/memory/collections/doomed`)).status).toBe(204);
    await gone(two.key);

    const three = await up('keep', 'chain');
    const me = await owner.api('GET', '/v1/memory/admin/me');
    expect((await owner.api('POST', '/v1/memory/admin/delete-account', { confirm: me.body.name })).status).toBe(200);
    expect(await ownerStore.head(three.key)).toBeNull();
  });
});

describe('ingest jobs', () => {
  let server: TestServer;
  let t: Tenant;

  beforeAll(async () => {
    // No worker: the test runs the jobs itself, as the queue would, to stop them where it wants.
    server = await startServer({}, { worker: false });
    t = await newTenant(server.url, server.adminKey);
  });
  afterAll(() => server?.close());

  /** One try of a file's job, as the queue runs it (the job runner resolves its agent and grant first). */
  const ingest = (batchId: string, key: string, meta: JobMeta) =>
    tasks.find((task) => task.name === ingestJob.name)!.run(server.app, { tenant_id: t.id, batch_id: batchId, key }, meta);

  it('a file whose worker died mid-way is ingested once by the retry, and a repeated job adds nothing', async () => {
    const text = Array.from({ length: 12 }, (_, i) => `Section ${i}: the tide gauge reading at pier ${i} is logged hourly. `.repeat(5)).join('\n\n');
    const drop = await postForm(server.url, t.key, '/v1/memory/collections/retry/drop?async_ingest=true', { files: [file('log.txt', 'text/plain', text)] });
    expect(drop.status).toBe(202);
    const [row] = await server.app.db.query<{ key: string }>('select key from ingest_files where tenant_id = $1', [t.id]);
    const where = [t.id, drop.body.batch_id, row!.key];
    // The first try was killed after it took the file and before its transaction committed.
    await server.app.db.query(`update ingest_files set state = 'processing', attempts = 1 where tenant_id = $1 and batch_id = $2 and key = $3`, where);
    const count = async () => (await server.app.db.query<{ n: number }>('select count(*)::int as n from memories where tenant_id = $1', [t.id]))[0]!.n;
    expect(await count()).toBe(0);

    await ingest(drop.body.batch_id, row!.key, { attempt: 2, maxAttempts: 3 });
    const batch = (await t.api('GET', `/v1/memory/ingest/batch/${drop.body.batch_id}`)).body;
    expect(batch).toMatchObject({ done: 1, complete: true });
    expect(batch.files[0].chunks).toBeGreaterThan(1);
    expect(await count()).toBe(batch.files[0].chunks);

    await ingest(drop.body.batch_id, row!.key, { attempt: 3, maxAttempts: 3 });
    expect(await count()).toBe(batch.files[0].chunks);
  });

  it("a file whose agent lost its grant before the job ran fails with the reason, and its batch is the collection's to read", async () => {
    const agent = await t.newKey('dropper');
    const drop = await postForm(server.url, agent.key, '/v1/memory/collections/locked-drop/drop?async_ingest=true', {
      files: [file('pier.txt', 'text/plain', 'The pier opens at six.')],
    });
    expect(drop.status).toBe(202);
    const [row] = await server.app.db.query<{ key: string }>('select key from ingest_files where tenant_id = $1 and batch_id = $2', [t.id, drop.body.batch_id]);
    const ownerId = (await t.api('GET', '/v1/memory/agents')).body.find((a: { label: string }) => a.label === 'default').id;
    // Restricted to the owner's key: the dropper is granted nothing on it any more.
    expect((await t.api('PUT', '/v1/memory/collections/locked-drop/grants', { agent_key_id: ownerId, can_read: true, can_write: true })).status).toBe(200);
    await ingest(drop.body.batch_id, row!.key, { attempt: 1, maxAttempts: 3 });
    const batch = await t.api('GET', `/v1/memory/ingest/batch/${drop.body.batch_id}`);
    expect(batch.body).toMatchObject({
      failed: 1,
      complete: true,
      files: [{ state: 'failed', chunks: 0, memory_ids: [], error: 'The API key "dropper" is not granted write access to collection "locked-drop"' }],
    });
    expect((await t.api('GET', '/v1/memory/collections/locked-drop/memories')).body).toEqual([]);
    const hidden = await t.api('GET', `/v1/memory/ingest/batch/${drop.body.batch_id}`, undefined, agent.key);
    expect(hidden.status).toBe(403);
    expect(hidden.body.detail).toContain('read');
  });

  it('a file gone from the store fails with its reason instead of being retried', async () => {
    const drop = await postForm(server.url, t.key, '/v1/memory/collections/retry/drop?async_ingest=true', { files: [file('gone.txt', 'text/plain', 'short')] });
    const [row] = await server.app.db.query<{ key: string }>('select key from ingest_files where tenant_id = $1 and batch_id = $2', [t.id, drop.body.batch_id]);
    await (await storeFor(server.app, t.id)).delete([row!.key]);
    await ingest(drop.body.batch_id, row!.key, { attempt: 1, maxAttempts: 3 });
    const batch = (await t.api('GET', `/v1/memory/ingest/batch/${drop.body.batch_id}`)).body;
    expect(batch).toMatchObject({ failed: 1, complete: true, files: [{ state: 'failed', error: 'Nothing was uploaded at this key' }] });
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEmbeddings, type FakeEmbeddings } from './fakes/embeddings-server.ts';
import { manyPagePdf, nestedHtml, zipBombDocx } from './support/bombs.ts';
import { buildIfStale } from './support/build.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { spawnServe } from './support/serve.ts';
import { startServer, type TestServer } from './support/server.ts';
import { postForm, type JsonFile } from './support/transports.ts';
import { until } from './support/until.ts';

/**
 * Files made to exhaust a reader (docs/contract.md, "Limits"), over real HTTP on a real server:
 * each fails alone with the limit it met named, the rest of its request or batch goes through,
 * and the API keeps answering while they are read. The bombs are generated here, small.
 */
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const SECRET = 'inbound-secret-for-the-bomb-tests-0123';
const DOMAIN = 'bombs.test';

const file = (filename: string, content_type: string, data: Buffer | string): JsonFile => ({
  filename,
  content_type,
  data: Buffer.from(data).toString('base64'),
});
const harmless = () => file('harmless.txt', 'text/plain', 'The harbour master retires in June.');

/** About `bytes` of plain prose in paragraphs, each sentence numbered so no two chunks are alike. */
function prose(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const paragraph = `Paragraph ${i}: the ferry timetable changes on the ${i % 28} of the month, and the harbour office answers questions until six.\n\n`;
    parts.push(paragraph);
    size += paragraph.length;
  }
  return parts.join('').slice(0, bytes);
}

/** Polls health while `work` is pending: how many answers came back 200 before it settled. */
async function healthDuring<T>(url: string, work: Promise<T>): Promise<{ result: T; answered: number }> {
  let settled = false;
  const done = work.finally(() => (settled = true));
  let answered = 0;
  while (!settled) {
    const res = await call(url, 'GET', '/v1/memory/health');
    if (res.status === 200 && !settled) answered++;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { result: await done, answered };
}

describe('file bombs under the default limits', () => {
  let server: TestServer;
  let t: Tenant;
  let bombs: { pdf: JsonFile; html3k: JsonFile; html200k: JsonFile; docx: JsonFile };
  const form = (path: string, fields: Record<string, unknown>) => postForm(server.url, t.key, path, fields);
  const batchDone = (id: string) =>
    until(
      `batch ${id}`,
      async () => {
        const res = await t.api('GET', `/v1/memory/ingest/batch/${id}`);
        expect(res.status).toBe(200);
        return res.body.complete ? res.body : undefined;
      },
      120_000,
    );
  const attempts = async (key: string) =>
    (await server.app.db.query<{ attempts: number }>('select attempts from ingest_files where tenant_id = $1 and key = $2', [t.id, key]))[0]!.attempts;

  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_INBOUND_SECRET: SECRET, ORGMEM_EMAIL_DOMAIN: DOMAIN });
    t = await newTenant(server.url, server.adminKey);
    bombs = {
      // 100,000 empty pages: 10.28 MB, under the 10 MB file limit's 10,485,760 bytes.
      pdf: file('pages.pdf', 'application/pdf', manyPagePdf(100_000)),
      html3k: file('deep.html', 'text/html', nestedHtml(3000)),
      html200k: file('deeper.html', 'text/html', nestedHtml(200_000)),
      // word/document.xml inflates to 1.1 GB.
      docx: file('bomb.docx', DOCX, await zipBombDocx(1100)),
    };
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sync drop: each bomb fails alone naming its limit, a 9.9 MB text and a harmless file are stored, health answers meanwhile', async () => {
    const big = prose(9_900_000);
    const { result: res, answered } = await healthDuring(
      server.url,
      form('/v1/memory/collections/sync/drop', {
        files: [bombs.pdf, bombs.html3k, bombs.html200k, bombs.docx, file('big.txt', 'text/plain', big), harmless()],
      }),
    );
    expect(answered).toBeGreaterThan(0);
    expect(res.status).toBe(201);
    const by = Object.fromEntries(res.body.files.map((f: { filename: string }) => [f.filename, f]));
    expect(by['pages.pdf']).toMatchObject({
      status: 'failed',
      detail: expect.stringMatching(/^The PDF was not read: it has 100000 pages.*ORGMEM_PARSE_MAX_PAGES/),
    });
    for (const name of ['deep.html', 'deeper.html'])
      expect(by[name]).toMatchObject({
        status: 'failed',
        detail: expect.stringMatching(/nest deeper than the limit of 500 levels \(ORGMEM_PARSE_MAX_DEPTH\)/),
      });
    expect(by['bomb.docx']).toMatchObject({ status: 'failed', detail: expect.stringMatching(/unzip to more than .*ORGMEM_PARSE_MAX_UNZIPPED_MB/) });
    expect(by['harmless.txt']).toMatchObject({ status: 'stored', chunks: 1 });
    // Thousands of chunks, written in statements far below the 65,534 parameters one may bind.
    expect(by['big.txt'].status).toBe('stored');
    expect(by['big.txt'].chunks).toBeGreaterThan(4900);
    const [stored] = await server.app.db.query<{ n: number; chars: number }>(
      `select count(*)::int as n, sum(length(text))::int as chars from memories where tenant_id = $1 and metadata->>'key' = $2`,
      [t.id, by['big.txt'].key],
    );
    expect(stored!.n).toBe(by['big.txt'].chunks);
    expect(stored!.chars).toBeGreaterThan(9_800_000);
  }, 240_000);

  it('async drop: the bombs fail at their first try with the limit named, the other files are done', async () => {
    const text = prose(1_200_000);
    const res = await form('/v1/memory/collections/later/drop', {
      async_ingest: 'true',
      files: [bombs.pdf, bombs.html200k, bombs.docx, file('text.txt', 'text/plain', text), harmless()],
    });
    expect(res.status).toBe(202);
    const { result: batch, answered } = await healthDuring(server.url, batchDone(res.body.batch_id));
    expect(answered).toBeGreaterThan(0);
    const by = Object.fromEntries(batch.files.map((f: { filename: string }) => [f.filename, f]));
    expect(by['pages.pdf']).toMatchObject({ state: 'failed', error: expect.stringMatching(/ORGMEM_PARSE_MAX_PAGES/) });
    expect(by['deeper.html']).toMatchObject({ state: 'failed', error: expect.stringMatching(/ORGMEM_PARSE_MAX_DEPTH/) });
    expect(by['bomb.docx']).toMatchObject({ state: 'failed', error: expect.stringMatching(/ORGMEM_PARSE_MAX_UNZIPPED_MB/) });
    for (const bomb of ['pages.pdf', 'deeper.html', 'bomb.docx']) expect(await attempts(by[bomb].key)).toBe(1);
    expect(by['harmless.txt']).toMatchObject({ state: 'done', chunks: 1 });
    expect(by['text.txt'].state).toBe('done');
    expect(by['text.txt'].chunks).toBeGreaterThan(512);
    expect(by['text.txt'].memory_ids).toHaveLength(by['text.txt'].chunks);
  });

  it('upload refuses a file over a limit with a 422 naming it, and keeps nothing', async () => {
    const res = await form('/v1/memory/collections/up/memories/upload', { files: [harmless(), bombs.html3k] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^deep\.html: The HTML page was not read: .*ORGMEM_PARSE_MAX_DEPTH/);
    expect((await t.api('GET', '/v1/memory/collections/up/memories')).status).toBe(404);
  });

  it('inbound mail: an HTML body nested 3,000 or 200,000 deep is refused with a 422 naming the limit; other mail goes on', async () => {
    const to = (await t.api('GET', '/v1/memory/email/address')).body.address as string;
    const from = `${t.name}@test.local`;
    const mail = async (html: string, messageId: string) =>
      (await new MailComposer({ from, to, subject: 'Deep', html, messageId, date: new Date('2026-01-05T09:00:00Z') }).compile().build()).toString('base64');
    const inbound = (raw: string) => call(server.url, 'POST', '/v1/memory/email/inbound', { body: { to, from, raw }, headers: { 'X-Inbound-Secret': SECRET } });
    for (const levels of [3000, 200_000]) {
      const res = await inbound(await mail(nestedHtml(levels), `<deep-${levels}@bombs.test>`));
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(
        /^The message's HTML body was not read: its elements nest deeper than the limit of 500 levels \(ORGMEM_PARSE_MAX_DEPTH\)$/,
      );
    }
    expect((await inbound(await mail('<p>The <b>ferry</b> is <a href="https://ferry.test/">late</a>.</p>', '<fine@bombs.test>'))).status).toBe(202);
    const stored = (await t.api('GET', '/v1/memory/collections/email/memories')).body as Array<{ text: string }>;
    expect(stored.map((m) => m.text)).toEqual([expect.stringMatching(/\n\nThe ferry is late \[https:\/\/ferry\.test\/\]\.$/)]);
  });
});

describe('a reader that runs out of time or memory', () => {
  let server: TestServer;
  let t: Tenant;

  beforeAll(async () => {
    // The structural limits out of the way, so only the runner's deadline and heap stop the bombs.
    server = await startServer({
      ORGMEM_EMBEDDER: 'hash',
      ORGMEM_PARSE_MAX_DEPTH: '10000000',
      ORGMEM_PARSE_MAX_UNZIPPED_MB: '4096',
      ORGMEM_PARSE_TIMEOUT_SECONDS: '8',
      ORGMEM_PARSE_MAX_MEMORY_MB: '64',
      ORGMEM_INBOUND_SECRET: SECRET,
      ORGMEM_EMAIL_DOMAIN: DOMAIN,
    });
    t = await newTenant(server.url, server.adminKey);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('ends the runner, fails the file at its first try with the reason, and reads the next file in a fresh one', async () => {
    const res = await postForm(server.url, t.key, '/v1/memory/collections/bombs/drop', {
      async_ingest: 'true',
      files: [file('slow.html', 'text/html', nestedHtml(200_000)), file('heavy.docx', DOCX, await zipBombDocx(40, true)), harmless()],
    });
    expect(res.status).toBe(202);
    const { result: batch, answered } = await healthDuring(
      server.url,
      until(
        'the batch',
        async () => {
          const b = await t.api('GET', `/v1/memory/ingest/batch/${res.body.batch_id}`);
          return b.body.complete ? b.body : undefined;
        },
        120_000,
      ),
    );
    expect(answered).toBeGreaterThan(0);
    const by = Object.fromEntries(batch.files.map((f: { filename: string }) => [f.filename, f]));
    expect(by['slow.html']).toMatchObject({
      state: 'failed',
      error: 'The HTML page was not read: reading it took longer than the limit of 8 s (ORGMEM_PARSE_TIMEOUT_SECONDS)',
    });
    expect(by['heavy.docx']).toMatchObject({
      state: 'failed',
      error: 'The Word document was not read: reading it needed more memory than the limit of 64 MB (ORGMEM_PARSE_MAX_MEMORY_MB)',
    });
    expect(by['harmless.txt']).toMatchObject({ state: 'done', chunks: 1 });
    const tries = await server.app.db.query<{ attempts: number }>(`select attempts from ingest_files where tenant_id = $1 and state = 'failed'`, [t.id]);
    expect(tries.map((r) => r.attempts)).toEqual([1, 1]);
    // The same files through a sync drop: a 422 naming each, never a 500.
    const sync = await postForm(server.url, t.key, '/v1/memory/collections/bombs/drop', { files: [file('slow.html', 'text/html', nestedHtml(200_000))] });
    expect(sync.status).toBe(422);
    expect(sync.body.detail).toMatch(/ORGMEM_PARSE_TIMEOUT_SECONDS/);
  });

  it("reads a received message's MIME structure in the runner: one that needs more than its memory is a 422 naming the limit", async () => {
    const to = (await t.api('GET', '/v1/memory/email/address')).body.address as string;
    const from = `${t.name}@test.local`;
    // 20 MB of quoted-printable text: decoded, split and joined by mailparser, more than a 64 MB heap holds.
    const body = `${'=41'.repeat(25)}=\r\n`.repeat(256_000);
    const mail = (text: string) =>
      Buffer.from(
        `From: ${from}\r\nTo: ${to}\r\nSubject: Large\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${text}\r\n`,
      ).toString('base64');
    const inbound = (raw: string) => call(server.url, 'POST', '/v1/memory/email/inbound', { body: { to, from, raw }, headers: { 'X-Inbound-Secret': SECRET } });
    const kills = async () => (await call(server.url, 'GET', '/v1/memory/admin/metrics', { key: server.adminKey })).body.counters.parse_runner_killed as number;
    const killsBefore = await kills();
    const res = await inbound(mail(body));
    expect([res.status, res.body.detail]).toEqual([
      422,
      'The message was not read: reading it needed more memory than the limit of 64 MB (ORGMEM_PARSE_MAX_MEMORY_MB)',
    ]);
    // Counted for the operator, in the window and in Prometheus' text by its reason.
    expect(await kills()).toBe(killsBefore + 1);
    const text = (await fetch(`${server.url}/v1/memory/admin/metrics/prometheus`, { headers: { authorization: `Bearer ${server.adminKey}` } }).then((r) =>
      r.text(),
    )) as string;
    expect(text).toMatch(/^orgmem_parse_runner_kills_total\{reason="memory"\} [1-9]\d*$/m);
    // The next message is read by a fresh runner.
    expect((await inbound(mail('The ferry is late.'))).status).toBe(202);
    const stored = (await t.api('GET', '/v1/memory/collections/email/memories')).body as Array<{ text: string }>;
    expect(stored.map((m) => m.text)).toEqual([expect.stringMatching(/\n\nThe ferry is late\.$/)]);
  });
});

describe('a large file whose embedding fails midway', () => {
  let fake: FakeEmbeddings;
  let server: TestServer;

  beforeAll(async () => {
    // On PostgreSQL 4 requests of 64 chunks make a step of 256, and the 6th request (failing with both its retries) cuts
    // the second step short; on the embedded database a step is 32 chunks, one request, so the 6th step fails whole.
    fake = await startFakeEmbeddings({ fails: (n) => n >= 5 && n <= 7 });
    server = await startServer({ ORGMEM_EMBEDDINGS_BASE_URL: fake.url, ORGMEM_EMBEDDINGS_MODEL: 'fake-embed' });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('goes on after the stored steps on its next try, embedding no stored chunk again', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const text = prose(1_180_000);
    const res = await postForm(server.url, t.key, '/v1/memory/collections/big/drop', { async_ingest: 'true', files: [file('big.txt', 'text/plain', text)] });
    expect(res.status).toBe(202);
    const batch = await until(
      'the batch',
      async () => {
        const b = await t.api('GET', `/v1/memory/ingest/batch/${res.body.batch_id}`);
        return b.body.complete ? b.body : undefined;
      },
      120_000,
    );
    const [big] = batch.files;
    expect(big).toMatchObject({ state: 'done' });
    expect(big.chunks).toBeGreaterThan(512);
    const embedded = fake.requests.reduce((n, r) => n + (r.input as string[]).length, 0);
    // Every chunk once, plus on PostgreSQL the one request of the step that was cut short.
    expect(embedded).toBe(big.chunks + (server.app.db.kind === 'postgres' ? 64 : 0));
    const rows = await server.app.db.query<{ chunk: number }>(
      `select (metadata->>'chunk')::int as chunk from memories where tenant_id = $1 and metadata->>'key' = $2 order by 1`,
      [t.id, big.key],
    );
    expect(rows.map((r) => r.chunk)).toEqual(Array.from({ length: big.chunks }, (_, i) => i + 1));
    expect(big.memory_ids).toHaveLength(big.chunks);
  });
});

describe('the compiled orgmem (dist/)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-bombs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads files in its bundled runner', async () => {
    buildIfStale('build:js');
    const { DATABASE_URL: _db, ORGMEM_DATA_DIR: _dir, ...env } = process.env as Record<string, string>;
    const serve = spawnServe({ ...env, ORGMEM_DATA_DIR: join(dir, 'data'), ORGMEM_EMBEDDER: 'hash', ORGMEM_LOG_LEVEL: 'info' }, dir);
    try {
      const { out, url } = await serve.ready;
      const key = /(mv_[A-Za-z0-9_-]{43})/.exec(out)![1]!;
      const res = await postForm(url, key, '/v1/memory/collections/docs/drop', {
        files: [file('page.html', 'text/html', '<h1>Tides</h1><p>High water at 06:12.</p>'), file('deep.html', 'text/html', nestedHtml(3000))],
      });
      expect(res.status).toBe(201);
      expect(res.body.files).toEqual([
        expect.objectContaining({ filename: 'page.html', status: 'stored', preview: 'Tides\n\nHigh water at 06:12.' }),
        expect.objectContaining({ filename: 'deep.html', status: 'failed', detail: expect.stringMatching(/ORGMEM_PARSE_MAX_DEPTH/) }),
      ]);
    } finally {
      await serve.stop();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.ts';
import { ProviderError, providerHttp } from '../src/services/connectors/http.ts';
import { OPEN } from './support/targets.ts';
import type { ConnectorRecord } from '../src/services/connectors/providers/connector.ts';
import { gdrive } from '../src/services/connectors/providers/gdrive.ts';
import { readText } from '../src/services/files/read-text.ts';
import { startGdriveFake, type GdriveFake } from './fakes/providers/gdrive.ts';

let fake: GdriveFake;
beforeEach(async () => {
  fake = await startGdriveFake();
});
afterEach(() => fake.close());

async function sync(cursor: string | null, over: { credentials?: Record<string, unknown>; config?: Record<string, unknown> } = {}): Promise<ConnectorRecord[]> {
  const out: ConnectorRecord[] = [];
  for await (const page of gdrive.pages({
    credentials: gdrive.credentials.parse(over.credentials ?? fake.connection().credentials),
    config: gdrive.config.parse(over.config ?? fake.connection().config),
    cursor,
    apiUrl: fake.url,
    http: providerHttp('gdrive', OPEN, { tries: 5, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 }),
    // The files pipeline's own reading, as the sync engine hands it.
    readFile: async (f) =>
      (await readText(f.data, { filename: f.filename, contentType: f.contentType }, loadConfig({ ORGMEM_DATA_DIR: 'memory://' }).parse, null)).text,
  })) {
    out.push(...page);
  }
  return out;
}

const maxCursor = (records: ConnectorRecord[]) => records.map((r) => r.cursor).reduce((a, b) => (a > b ? a : b));
const lists = () => fake.requests.filter((r) => r.url.pathname === '/drive/v3/files');
const byId = (records: ConnectorRecord[], id: string) => records.find((r) => r.id === id)!;

/** A file of this type: the fake serves a Google Doc unless told otherwise. */
function putFile(title: string, body: string, mimeType?: string, author?: string) {
  const r = fake.put({ title, body, author });
  if (mimeType) fake.mimeTypes.set(r.id, mimeType);
  return r;
}

describe('gdrive connector', () => {
  it('reads every file across pages, newest-modified first, with the documented requests', async () => {
    const doc = putFile('Roadmap', 'Ship connectors in Q3.');
    const sheet = putFile('Budget', 'item,cost\nservers,1200', 'application/vnd.google-apps.spreadsheet');
    const slides = putFile('Kickoff', 'Welcome to the project', 'application/vnd.google-apps.presentation');
    putFile('Team folder', '', 'application/vnd.google-apps.folder');
    putFile('Survey', '', 'application/vnd.google-apps.form');
    const txt = putFile('notes.txt', 'Plain notes about the launch.', 'text/plain');
    const md = putFile('README.md', '# Setup\n\nRun the installer.', 'text/markdown');
    const records = await sync(null);
    // folders and forms have no text: skipped; the rest newest first
    expect(records.map((r) => r.id)).toEqual([md.id, txt.id, slides.id, sheet.id, doc.id]);
    // seven files, two a page: four list requests, each after the previous nextPageToken
    expect(lists()).toHaveLength(4);
    const first = lists()[0]!.url.searchParams;
    expect(first.get('q')).toBe('trashed = false');
    expect(first.get('orderBy')).toBe('modifiedTime desc');
    expect(first.get('pageSize')).toBe('100');
    expect(first.get('pageToken')).toBeNull();
    expect(lists()[1]!.url.searchParams.get('pageToken')).toEqual(expect.any(String));
    expect(fake.requests.every((r) => r.headers.authorization === 'Bearer ya29.fake-drive-access-token')).toBe(true);
    // native documents exported (text/csv for the spreadsheet), other files downloaded
    const exports = fake.requests
      .filter((r) => r.url.pathname.endsWith('/export'))
      .map((r) => [r.url.pathname.split('/')[4], r.url.searchParams.get('mimeType')]);
    expect(exports.sort()).toEqual(
      [
        [doc.id, 'text/plain'],
        [sheet.id, 'text/csv'],
        [slides.id, 'text/plain'],
      ].sort(),
    );
    const downloads = fake.requests.filter((r) => r.url.searchParams.get('alt') === 'media').map((r) => r.url.pathname.split('/')[4]);
    expect(downloads.sort()).toEqual([txt.id, md.id].sort());
  });

  it('maps a file to a record: name then text, link, last modifier, modifiedTime', async () => {
    const doc = putFile('Roadmap', 'Ship connectors in Q3.\nThen billing.', undefined, 'Carla Dias');
    const md = putFile('README.md', '# Setup\n\nRun the installer.', 'text/markdown');
    const records = await sync(null);
    expect(byId(records, doc.id)).toEqual({
      id: doc.id,
      // the export's byte-order mark is gone
      text: 'Roadmap\n\nShip connectors in Q3.\nThen billing.',
      url: `https://docs.google.com/document/d/${doc.id}/edit?usp=drivesdk`,
      author: 'Carla Dias',
      updated_at: new Date(doc.updated).toISOString(),
      cursor: new Date(doc.updated).toISOString(),
      extra: { mime_type: 'application/vnd.google-apps.document' },
    });
    const readme = byId(records, md.id);
    expect(readme.text).toBe('README.md\n\n# Setup\n\nRun the installer.');
    expect(readme.url).toBe(`https://drive.google.com/file/d/${md.id}/view?usp=drivesdk`);
    expect(readme.extra).toEqual({ mime_type: 'text/markdown' });
  });

  it('a file that cannot be read becomes a record saying why, and the sync goes on', async () => {
    const blob = putFile('export.bin', 'x', 'application/octet-stream');
    const locked = putFile('contract.txt', 'secret', 'text/plain');
    fake.restricted.add(locked.id);
    const big = putFile('huge.txt', 'x'.repeat(10 * 1024 * 1024 + 1), 'text/plain');
    const ok = putFile('ok.txt', 'Readable.', 'text/plain');
    const records = await sync(null);
    expect(records).toHaveLength(4);
    expect(byId(records, ok.id).text).toBe('ok.txt\n\nReadable.');
    expect(byId(records, blob.id).text).toMatch(/^export\.bin\n\nThis file could not be read: Unsupported file type \(export\.bin/);
    expect(byId(records, locked.id).text).toBe('contract.txt\n\nThis file could not be read: gdrive answered 403: This file cannot be downloaded by the user.');
    expect(byId(records, big.id).text).toBe('huge.txt\n\nThis file could not be read: it is larger than 10485760 bytes (10 MB)');
    expect(byId(records, big.id).extra).toEqual({ mime_type: 'text/plain', unreadable: true });
    // the oversized file is never downloaded
    expect(fake.requests.some((r) => r.url.pathname.includes(big.id) && r.url.searchParams.get('alt') === 'media')).toBe(false);
  });

  it('an incremental sync returns only files created or changed after the cursor', async () => {
    const a = putFile('A', 'a');
    putFile('B', 'b');
    const first = await sync(null);
    expect(first).toHaveLength(2);
    const cursor = maxCursor(first);
    const c = putFile('C', 'c');
    fake.put({ id: a.id, title: 'A2', body: 'a changed' });
    const before = lists().length;
    const second = await sync(cursor);
    expect(second.map((r) => r.id)).toEqual([a.id, c.id]);
    expect(byId(second, a.id).text).toBe('A2\n\na changed');
    expect(maxCursor(second) > cursor).toBe(true);
    expect(lists()[before]!.url.searchParams.get('q')).toBe(`trashed = false and modifiedTime > '${cursor}'`);
    // nothing changed since: nothing returned
    expect(await sync(maxCursor(second))).toEqual([]);
  });

  it('keeps to the configured folder and query', async () => {
    const inFolder = putFile('Q3 plan', 'in the folder');
    putFile('Q3 plan elsewhere', 'not in the folder');
    const minutes = putFile('Minutes', 'in the folder but not matching');
    fake.parents.set(inFolder.id, 'folder-abc');
    fake.parents.set(minutes.id, 'folder-abc');
    const records = await sync(null, { config: { folder_id: 'folder-abc', query: "name contains 'plan'" } });
    expect(records.map((r) => r.id)).toEqual([inFolder.id]);
    expect(lists()[0]!.url.searchParams.get('q')).toBe("trashed = false and 'folder-abc' in parents and (name contains 'plan')");
    // a folder id that could break out of the query's quotes is refused at create
    expect(gdrive.config.safeParse({ folder_id: "x' or name != '" }).success).toBe(false);
  });

  it('waits for Retry-After on a 429, then goes on', async () => {
    putFile('A', 'a');
    fake.failNext(429);
    const started = Date.now();
    const records = await sync(null);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(records.map((r) => r.text)).toEqual(['A\n\na']);
    expect(lists()).toHaveLength(2); // the refused list, then the retry
  });

  it('retries a 500, then goes on', async () => {
    putFile('A', 'a');
    fake.failNext(500);
    const records = await sync(null);
    expect(records).toHaveLength(1);
    expect(lists()).toHaveLength(2);
  });

  it("a wrong token fails with Google's own message", async () => {
    putFile('A', 'a');
    const err = await sync(null, { credentials: { token: 'ya29.expired' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).status).toBe(401);
    expect((err as ProviderError).message).toMatch(/^gdrive answered 401: Request had invalid authentication credentials\. Expected OAuth 2 access token/);
  });

  it('checks credentials and config', () => {
    expect(gdrive.credentials.safeParse({}).error?.issues[0]?.path).toEqual(['token']);
    expect(gdrive.credentials.safeParse({ token: 't', expires_at: 'tomorrow' }).success).toBe(false);
    expect(gdrive.credentials.parse({ token: 't', refresh_token: 'r', expires_at: '2030-01-01T00:00:00.000Z', other: 1 })).toEqual({
      token: 't',
      refresh_token: 'r',
      expires_at: '2030-01-01T00:00:00.000Z',
    });
    expect(gdrive.config.parse({ sync_interval_minutes: 15 })).toEqual({ sync_interval_minutes: 15 });
    expect(gdrive.config.safeParse({ sync_interval_minutes: 0 }).success).toBe(false);
  });
});

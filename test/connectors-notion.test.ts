import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectorRecord } from '../src/services/connectors/providers/connector.ts';
import { notion } from '../src/services/connectors/providers/notion.ts';
import { ProviderError, providerHttp } from '../src/services/connectors/http.ts';
import { OPEN } from './support/targets.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { NOTION_FAKE_DATABASE, startNotionFake } from './fakes/providers/notion.ts';

let fake: ProviderFake;

async function all(cursor: string | null = null, over: { token?: string; database_id?: string } = {}): Promise<ConnectorRecord[]> {
  const conn = fake.connection();
  const pages = notion.pages!({
    credentials: notion.credentials.parse({ ...conn.credentials, ...(over.token && { token: over.token }) }),
    config: notion.config.parse({ ...conn.config, ...(over.database_id && { database_id: over.database_id }) }),
    cursor,
    apiUrl: fake.url,
    http: providerHttp('notion', OPEN, { tries: 5, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 }),
    readFile: async () => '',
  });
  const out: ConnectorRecord[] = [];
  for await (const page of pages) out.push(...page);
  return out;
}

const calls = (re: RegExp) => fake.requests.filter((r) => re.test(r.url.pathname));
const maxCursor = (records: ConnectorRecord[]) =>
  records
    .map((r) => r.cursor)
    .sort()
    .at(-1)!;
const titles = (records: ConnectorRecord[]) => records.map((r) => r.text.split('\n')[0]).sort();
const OLD = Date.parse('2024-05-01T09:00:00.000Z');

/** Records last edited in distinct minutes of the past, so a cursor falls between them. */
function putOld(names: string[]) {
  return names.map((n, i) => {
    const r = fake.put({ title: `Page ${n}`, body: `body of ${n}` });
    r.updated = OLD + i * 60_000;
    return r;
  });
}

describe('notion connector schemas', () => {
  it('checks credentials and config, naming the missing field', () => {
    expect(notion.credentials.safeParse({}).error?.issues[0]?.path).toEqual(['token']);
    expect(notion.config.parse({})).toEqual({});
    expect(notion.config.parse({ database_id: 'db', sync_interval_minutes: 30, other: 1 })).toMatchObject({ database_id: 'db', sync_interval_minutes: 30 });
    expect(notion.config.safeParse({ sync_interval_minutes: 0 }).error?.issues[0]?.path).toEqual(['sync_interval_minutes']);
  });
});

describe('notion connector', () => {
  afterEach(() => fake.close());

  it('reads every shared page across search pages and block pages', async () => {
    fake = await startNotionFake();
    const recs = ['one', 'two', 'three', 'four', 'five'].map((n) => fake.put({ title: `Page ${n}`, body: `line 1 of ${n}\nline 2\nline 3` }));
    const records = await all();
    expect(titles(records)).toEqual(recs.map((r) => r.title).sort());
    expect(calls(/^\/v1\/search$/)).toHaveLength(3);
    // 3 blocks a page at 2 a request.
    expect(calls(/\/children$/)).toHaveLength(10);
    expect(records.find((r) => r.id === recs[2]!.id)!.text).toBe('Page three\nline 1 of three\nline 2\nline 3');
    // The users endpoint once per user, not once per page.
    expect(calls(/^\/v1\/users\//)).toHaveLength(1);
  });

  it('maps a page to a record, nested blocks included', async () => {
    fake = await startNotionFake();
    const body = 'Intro paragraph\n- first item\n  - a sub-item\n  - another\n[x] done task\n[ ] open task\n\nThe end';
    const r = fake.put({ title: 'Q3 plan & goals', body, author: 'Ana Lima' });
    const [rec] = await all(null, { database_id: NOTION_FAKE_DATABASE });
    const edited = new Date(Math.floor(r.updated / 60_000) * 60_000).toISOString();
    expect(rec).toEqual({
      id: r.id,
      text: `Q3 plan & goals\n${body}`,
      url: `https://www.notion.so/Q3-plan-goals-${r.id.replace(/-/g, '')}`,
      author: 'Ana Lima',
      updated_at: edited,
      cursor: edited,
      extra: { parent: 'database_id', database_id: NOTION_FAKE_DATABASE },
    });
    expect(calls(/\/children$/).length).toBeGreaterThan(1);
  });

  it('stops searching at the first page older than the cursor', async () => {
    fake = await startNotionFake();
    const old = putOld(['a', 'b', 'c', 'd', 'e', 'f']);
    const first = await all();
    expect(first).toHaveLength(6);
    const cursor = maxCursor(first);
    expect(cursor).toBe('2024-05-01T09:05:00.000Z');

    fake.put({ title: 'Page new', body: 'new body' });
    fake.put({ id: old[1]!.id, title: 'Page b edited', body: 'edited body' });
    fake.requests.length = 0;
    const second = await all(cursor);
    // The newest page of the first run comes back too: Notion's minutes make the filter "on or after".
    expect(titles(second)).toEqual(['Page b edited', 'Page f', 'Page new']);
    expect(second.find((r) => r.id === old[1]!.id)!.text).toBe('Page b edited\nedited body');
    // Page 1 [b edited, new], page 2 [f, e]: e is older than the cursor, so the 4 pages of results end at 2.
    expect(calls(/^\/v1\/search$/)).toHaveLength(2);
  });

  it('filters a database by last_edited_time on or after the cursor, and sees edits in the same minute', async () => {
    fake = await startNotionFake();
    const old = putOld(['a', 'b', 'c', 'd']);
    const first = await all(null, { database_id: NOTION_FAKE_DATABASE });
    expect(first).toHaveLength(4);
    const cursor = maxCursor(first);

    // An edit later in the cursor's minute keeps the cursor's time at Notion.
    old[0]!.updated = Date.parse(cursor) + 30_000;
    old[0]!.body = 'edited in the same minute';
    fake.put({ title: 'Page new', body: 'new body' });
    fake.requests.length = 0;
    const second = await all(cursor, { database_id: NOTION_FAKE_DATABASE });
    expect(titles(second)).toEqual(['Page a', 'Page d', 'Page new']);
    expect(second.find((r) => r.id === old[0]!.id)!.text).toContain('edited in the same minute');
    const [query] = calls(/\/query$/);
    expect(JSON.parse(query!.body)).toMatchObject({
      sorts: [{ timestamp: 'last_edited_time', direction: 'descending' }],
      filter: { timestamp: 'last_edited_time', last_edited_time: { on_or_after: cursor } },
    });
    expect(query!.headers['notion-version']).toBe('2022-06-28');
  });

  it('honours Retry-After on a 429: the retry comes at least 900 ms later', async () => {
    fake = await startNotionFake();
    fake.put({ title: 'Hello', body: 'world' });
    fake.failNext(429);
    const started = Date.now();
    expect(await all()).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(calls(/^\/v1\/search$/)).toHaveLength(2);
  });

  it('retries a 500', async () => {
    fake = await startNotionFake();
    fake.put({ title: 'Hello', body: 'world' });
    fake.failNext(500);
    expect(await all()).toHaveLength(1);
    expect(calls(/^\/v1\/search$/)).toHaveLength(2);
  });

  it("fails with Notion's own message on a wrong token or database", async () => {
    fake = await startNotionFake();
    fake.put({ title: 'Hello', body: 'world' });
    const err = await all(null, { token: 'secret_wrong' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toContain('API token is invalid.');
    expect((err as ProviderError).status).toBe(401);
    await expect(all(null, { database_id: 'nope' })).rejects.toThrow('Could not find database with ID: nope');
  });

  it('keeps user ids as authors when the integration may not read users, asking once', async () => {
    fake = await startNotionFake({ userInfo: false });
    fake.put({ title: 'One', body: 'x', author: 'Ana Lima' });
    fake.put({ title: 'Two', body: 'y', author: 'Bruno Costa' });
    const records = await all();
    expect(records).toHaveLength(2);
    for (const r of records) expect(r.author).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(calls(/^\/v1\/users\//)).toHaveLength(1);
  });
});

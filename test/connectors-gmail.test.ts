import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError, providerHttp } from '../src/services/connectors/http.ts';
import { OPEN } from './support/targets.ts';
import type { ConnectorRecord } from '../src/services/connectors/providers/connector.ts';
import { gmail } from '../src/services/connectors/providers/gmail.ts';
import { startGmailFake, type GmailFake } from './fakes/providers/gmail.ts';

let fake: GmailFake;
beforeEach(async () => {
  fake = await startGmailFake();
});
afterEach(() => fake.close());

async function sync(cursor: string | null, over: { credentials?: Record<string, unknown>; config?: Record<string, unknown> } = {}): Promise<ConnectorRecord[]> {
  const out: ConnectorRecord[] = [];
  for await (const page of gmail.pages({
    credentials: gmail.credentials.parse(over.credentials ?? fake.connection().credentials),
    config: gmail.config.parse(over.config ?? fake.connection().config),
    cursor,
    apiUrl: fake.url,
    http: providerHttp('gmail', OPEN, { tries: 5, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 }),
    readFile: async (f) => f.data.toString('utf8'),
  })) {
    out.push(...page);
  }
  return out;
}

const maxCursor = (records: ConnectorRecord[]) => records.map((r) => r.cursor).reduce((a, b) => (a > b ? a : b));
const lists = () => fake.requests.filter((r) => r.url.pathname === '/gmail/v1/users/me/messages');
const reads = () => fake.requests.filter((r) => r.url.pathname.startsWith('/gmail/v1/users/me/messages/'));
const byId = (records: ConnectorRecord[], id: string) => records.find((r) => r.id === id)!;

describe('gmail connector', () => {
  it('reads every message across pages, newest first, with the documented requests', async () => {
    const ids = [1, 2, 3, 4, 5].map((i) => fake.put({ title: `Subject ${i}`, body: `Body ${i}` }).id);
    const records = await sync(null);
    expect(records.map((r) => r.id)).toEqual([...ids].reverse());
    // five messages, two a page: three list requests, then one full read per message
    expect(lists()).toHaveLength(3);
    expect(lists()[0]!.url.searchParams.get('maxResults')).toBe('100');
    expect(lists()[0]!.url.searchParams.get('q')).toBeNull();
    expect(lists()[0]!.url.searchParams.get('pageToken')).toBeNull();
    expect(lists()[1]!.url.searchParams.get('pageToken')).toEqual(expect.any(String));
    expect(reads()).toHaveLength(5);
    expect(reads().every((r) => r.url.searchParams.get('format') === 'full')).toBe(true);
    expect(fake.requests.every((r) => r.headers.authorization === 'Bearer ya29.fake-gmail-access-token')).toBe(true);
  });

  it('maps a message to a record: subject, sender, plain-text body', async () => {
    const m = fake.put({ title: 'Quarterly numbers', body: 'Revenue is up 12%.\nCosts are flat.', author: 'Carla Dias' });
    const [r] = await sync(null);
    expect(r).toEqual({
      id: m.id,
      text: 'Subject: Quarterly numbers\nFrom: Carla Dias <carla.dias@example.com>\n\nRevenue is up 12%.\nCosts are flat.',
      url: `https://mail.google.com/mail/u/0/#all/${m.id}`,
      author: 'Carla Dias <carla.dias@example.com>',
      updated_at: new Date(m.updated).toISOString(),
      cursor: String(m.updated).padStart(13, '0'),
      extra: { thread_id: m.id, labels: ['INBOX', 'UNREAD', 'CATEGORY_PERSONAL'] },
    });
    expect(r!.cursor).toMatch(/^\d{13}$/);
  });

  it('takes the text/plain side, converts HTML-only mail, and leaves attachments and drafts out', async () => {
    const alt = fake.put({ title: 'Alternative', body: 'Plain side & more' });
    const html = fake.put({ title: 'Newsletter', body: 'Big <news> & offers\nSecond line' });
    fake.formats.set(html.id, 'html');
    const plain = fake.put({ title: 'Plain', body: 'Only plain text' });
    fake.formats.set(plain.id, 'plain');
    const mixed = fake.put({ title: 'With attachment', body: 'See the attached notes.' });
    fake.formats.set(mixed.id, 'mixed');
    const draft = fake.put({ title: 'Half written', body: 'Dear' });
    fake.labels.set(draft.id, ['DRAFT']);
    const records = await sync(null);
    expect(records.map((r) => r.id).sort()).toEqual([alt.id, html.id, plain.id, mixed.id].sort());
    expect(byId(records, alt.id).text).toBe('Subject: Alternative\nFrom: Ana Lima <ana.lima@example.com>\n\nPlain side & more');
    // no tags, no entities, no image, no link target, line breaks kept
    expect(byId(records, html.id).text).toBe('Subject: Newsletter\nFrom: Ana Lima <ana.lima@example.com>\n\nBig <news> & offers\nSecond line\n\nUnsubscribe');
    expect(byId(records, plain.id).text).toMatch(/\n\nOnly plain text$/);
    expect(byId(records, mixed.id).text).toMatch(/\n\nSee the attached notes\.$/);
  });

  it('an incremental sync returns the messages received after the cursor, and the last hour again', async () => {
    const old = fake.put({ title: 'Old 1', body: 'a' });
    const recent = fake.put({ title: 'Old 2', body: 'b' });
    old.updated -= 3 * 3_600_000; // received three hours before the others
    const first = await sync(null);
    expect(first.map((r) => r.id)).toEqual([recent.id, old.id]);
    const cursor = maxCursor(first);
    expect(cursor).toBe(String(recent.updated).padStart(13, '0'));
    const c = fake.put({ title: 'New 1', body: 'c' });
    const d = fake.put({ title: 'New 2', body: 'd' });
    const before = lists().length;
    const second = await sync(cursor);
    // after: in seconds, an hour before the cursor (mail delivered or indexed late): the new
    // messages, and the last sync's message of that hour again, unchanged (the engine skips it)
    expect(lists()[before]!.url.searchParams.get('q')).toBe(`after:${Math.floor(Number(cursor) / 1000) - 3600}`);
    expect(second.map((r) => r.id)).toEqual([d.id, c.id, recent.id]);
    expect(byId(second, recent.id)).toEqual(byId(first, recent.id));
    expect(maxCursor(second) > cursor).toBe(true);
    expect(second.filter((r) => r.cursor > cursor).map((r) => r.id)).toEqual([d.id, c.id]);
  });

  it("passes the configured query, parenthesised, with Gmail's operators", async () => {
    const bob = fake.put({ title: 'From Bob', body: 'hi', author: 'Bob Reis' });
    fake.put({ title: 'From Ana', body: 'hello' });
    const records = await sync(null, { config: { query: 'from:bob' } });
    expect(records.map((r) => r.id)).toEqual([bob.id]);
    expect(lists()[0]!.url.searchParams.get('q')).toBe('(from:bob)');
    const cursor = records[0]!.cursor;
    await sync(cursor, { config: { query: 'from:bob' } });
    expect(lists().at(-1)!.url.searchParams.get('q')).toBe(`(from:bob) after:${Math.floor(Number(cursor) / 1000) - 3600}`);
  });

  it('an empty mailbox gives no pages', async () => {
    expect(await sync(null)).toEqual([]);
    expect(lists()).toHaveLength(1);
  });

  it('waits for Retry-After on a 429, then goes on', async () => {
    fake.put({ title: 'A', body: 'a' });
    fake.failNext(429);
    const started = Date.now();
    const records = await sync(null);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(records.map((r) => r.text)).toEqual(['Subject: A\nFrom: Ana Lima <ana.lima@example.com>\n\na']);
    expect(lists()).toHaveLength(2);
  });

  it('retries a 500, then goes on', async () => {
    fake.put({ title: 'A', body: 'a' });
    fake.failNext(500);
    const records = await sync(null);
    expect(records).toHaveLength(1);
    expect(lists()).toHaveLength(2);
  });

  it("a wrong token fails with Google's own message", async () => {
    fake.put({ title: 'A', body: 'a' });
    const err = await sync(null, { credentials: { token: 'ya29.expired' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).status).toBe(401);
    expect((err as ProviderError).message).toMatch(/^gmail answered 401: Request had invalid authentication credentials\. Expected OAuth 2 access token/);
  });

  it('checks credentials and config', () => {
    expect(gmail.credentials.safeParse({ refresh_token: 'r' }).error?.issues[0]?.path).toEqual(['token']);
    expect(gmail.credentials.safeParse({ token: 't', expires_at: 12 }).success).toBe(false);
    expect(gmail.config.parse({ query: 'label:support', sync_interval_minutes: 30, extra: true })).toEqual({
      query: 'label:support',
      sync_interval_minutes: 30,
    });
  });
});

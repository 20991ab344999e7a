import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConnectorRecord } from '../src/services/connectors/providers/connector.ts';
import { slack } from '../src/services/connectors/providers/slack.ts';
import { ProviderError, providerHttp } from '../src/services/connectors/http.ts';
import { OPEN } from './support/targets.ts';
import { SLACK_FAKE_CHANNEL, startSlackFake, type SlackFake } from './fakes/providers/slack.ts';

let fake: SlackFake;
beforeEach(async () => {
  fake = await startSlackFake();
});
afterEach(() => fake.close());

function run(cursor: string | null = null, over: { token?: string; channel_id?: string } = {}) {
  const conn = fake.connection();
  return slack.pages!({
    credentials: slack.credentials.parse({ ...conn.credentials, ...(over.token && { token: over.token }) }),
    config: slack.config.parse({ ...conn.config, ...(over.channel_id && { channel_id: over.channel_id }) }),
    cursor,
    apiUrl: fake.url,
    http: providerHttp('slack', OPEN, { tries: 5, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 }),
    readFile: async () => '',
  });
}

async function all(cursor: string | null = null, over = {}): Promise<ConnectorRecord[]> {
  const out: ConnectorRecord[] = [];
  for await (const page of run(cursor, over)) out.push(...page);
  return out;
}

const calls = (method: string) => fake.requests.filter((r) => r.url.pathname === `/${method}`);
const maxCursor = (records: ConnectorRecord[]) =>
  records
    .map((r) => r.cursor)
    .sort()
    .at(-1)!;

describe('slack connector', () => {
  it('checks credentials and config, naming the missing field', () => {
    expect(slack.config.safeParse({}).error?.issues[0]?.path).toEqual(['channel_id']);
    expect(slack.credentials.safeParse({}).error?.issues[0]?.path).toEqual(['token']);
    expect(slack.config.parse({ channel_id: 'C1', sync_interval_minutes: 15, other: 1 })).toMatchObject({ channel_id: 'C1', sync_interval_minutes: 15 });
  });

  it('reads every message across pages, threads with their replies, and skips channel noise', async () => {
    const recs = ['one', 'two', 'three', 'four', 'five'].map((n) => fake.put({ title: `Message ${n}`, body: `body of ${n}` }));
    fake.reply(recs[1]!.id, 'first reply');
    fake.reply(recs[1]!.id, 'second reply');
    fake.reply(recs[1]!.id, 'third reply', 'Carla Dias');

    const records = await all();
    expect(records.map((r) => r.text.split('\n')[0]).sort()).toEqual(recs.map((r) => r.title).sort());
    // 5 messages + the join message at 2 a page; the thread (parent + 3 replies) at 2 a page.
    expect(calls('conversations.history')).toHaveLength(3);
    expect(calls('conversations.replies')).toHaveLength(2);
    expect(records.some((r) => r.text.includes('has joined'))).toBe(false);
    const thread = records.find((r) => r.text.startsWith('Message two'))!;
    expect(thread.text).toBe('Message two\nbody of two\nBruno Costa: first reply\nBruno Costa: second reply\nCarla Dias: third reply');
    // users.info once per user, not once per message.
    expect(calls('users.info')).toHaveLength(3);
  });

  it('maps a message to a record', async () => {
    const r = fake.put({ title: 'Deploy <today> & tomorrow', body: 'Ship it at 5pm', author: 'Ana Lima' });
    const ts = fake.tsOf(r.id);
    const [rec] = await all();
    expect(ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(rec).toEqual({
      id: `${SLACK_FAKE_CHANNEL}:${ts}`,
      text: 'Deploy <today> & tomorrow\nShip it at 5pm',
      url: `https://slack.com/archives/${SLACK_FAKE_CHANNEL}/p${ts.replace('.', '')}`,
      author: 'Ana Lima',
      updated_at: new Date(r.updated).toISOString(),
      cursor: ts,
      extra: { channel: SLACK_FAKE_CHANNEL, ts, reply_count: 0 },
    });
  });

  it('returns on the next sync only new messages, edited ones and threads with new replies', async () => {
    const old = ['a', 'b', 'c', 'd'].map((n) => fake.put({ title: `Old ${n}`, body: `old body ${n}` }));
    const first = await all();
    expect(first).toHaveLength(4);
    const cursor = maxCursor(first);
    expect(cursor).toBe(fake.tsOf(old[3]!.id));

    fake.put({ title: 'New message', body: 'new body' });
    fake.put({ id: old[1]!.id, title: 'Old b edited', body: 'edited body' });
    fake.reply(old[0]!.id, 'a late reply');
    fake.requests.length = 0;

    const second = await all(cursor);
    expect(second.map((r) => r.text.split('\n')[0]).sort()).toEqual(['New message', 'Old a', 'Old b edited']);
    expect(second.find((r) => r.text.startsWith('Old a'))!.text).toContain('Bruno Costa: a late reply');
    // The edited message keeps its id; its cursor is the edit's time.
    const edited = second.find((r) => r.text.startsWith('Old b'))!;
    expect(edited.id).toBe(`${SLACK_FAKE_CHANNEL}:${fake.tsOf(old[1]!.id)}`);
    expect(edited.cursor > cursor).toBe(true);
    // History is read from a week before the cursor, to see older threads that changed.
    const oldest = calls('conversations.history')[0]!.url.searchParams.get('oldest')!;
    expect(Number(cursor) - Number(oldest)).toBeCloseTo(7 * 86_400, 3);

    expect(await all(maxCursor(second))).toEqual([]);
  });

  it('honours Retry-After on a 429: the retry comes at least 900 ms later', async () => {
    fake.put({ title: 'Hello', body: 'world' });
    fake.failNext(429);
    const started = Date.now();
    expect(await all()).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(calls('conversations.history')).toHaveLength(2);
  });

  it('retries a 500', async () => {
    fake.put({ title: 'Hello', body: 'world' });
    fake.failNext(500);
    expect(await all()).toHaveLength(1);
    expect(calls('conversations.history')).toHaveLength(2);
  });

  it("fails with Slack's own error on a wrong token or channel", async () => {
    fake.put({ title: 'Hello', body: 'world' });
    const wrongToken = await all(null, { token: 'xoxb-wrong' }).catch((e: unknown) => e);
    expect(wrongToken).toBeInstanceOf(ProviderError);
    expect((wrongToken as Error).message).toBe('slack: invalid_auth');
    await expect(all(null, { channel_id: 'C0NOPE' })).rejects.toThrow('slack: channel_not_found');
  });
});

import { createHash } from 'node:crypto';
import { bearer, startProviderFake, type FakeAnswer, type FakeRecord, type FakeRequest, type ProviderFake } from './base.ts';

export const SLACK_FAKE_TOKEN = 'xoxb-fake-token';
export const SLACK_FAKE_CHANNEL = 'C0FAKE0001';

/** A Slack ts: seconds and microseconds, fixed width. */
const tsOf = (ms: number, micro = 0) => `${Math.floor(ms / 1000)}.${String((ms % 1000) * 1000 + micro).padStart(6, '0')}`;
/** Slack escapes these three in message text. */
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Reply {
  ts: string;
  user: string;
  text: string;
}

export interface SlackFake extends ProviderFake {
  /** Posts a reply in the thread of record `parentId` (the record itself does not change). */
  reply(parentId: string, text: string, author?: string): Reply;
  /** The ts of a record's message (it keeps it when the record changes: an edit). */
  tsOf(id: string): string;
}

/**
 * Slack's Web API for one channel: conversations.history (newest first, oldest/latest exclusive,
 * cursor pagination), conversations.replies (parent first, then replies oldest first) and
 * users.info. Each record is a channel message, title and body its text; changing a record edits
 * the message (same ts, `edited.ts` the change). Errors answer HTTP 200 with {ok: false, error}.
 */
export async function startSlackFake(opts: { pageSize?: number } = {}): Promise<SlackFake> {
  const cap = opts.pageSize ?? 2;
  const created = new Map<string, string>();
  const replies = new Map<string, Reply[]>();
  const users = new Map<string, string>();
  const userId = (name: string) => {
    const id = `U${createHash('sha1').update(name).digest('hex').slice(0, 9).toUpperCase()}`;
    users.set(id, name);
    return id;
  };
  // The bot joining the channel before anything else: a system message the connector must skip.
  const join = {
    type: 'message',
    subtype: 'channel_join',
    user: userId('Orgmem Bot'),
    text: `<@${userId('Orgmem Bot')}> has joined the channel`,
    ts: tsOf(Date.now() - 7_200_000),
  };

  const tsOfRecord = (r: FakeRecord) => created.get(r.id) ?? tsOf(r.updated);
  function message(r: FakeRecord) {
    const ts = tsOfRecord(r);
    const thread = replies.get(r.id) ?? [];
    const user = userId(r.author);
    return {
      type: 'message',
      user,
      text: escape(`${r.title}\n${r.body}`),
      ts,
      team: 'T0FAKE0001',
      ...(tsOf(r.updated) !== ts && { edited: { user, ts: tsOf(r.updated) } }),
      ...(thread.length > 0 && {
        thread_ts: ts,
        reply_count: thread.length,
        reply_users_count: new Set(thread.map((x) => x.user)).size,
        reply_users: [...new Set(thread.map((x) => x.user))],
        latest_reply: thread.at(-1)!.ts,
      }),
    };
  }

  /** Slack's cursor pagination: `limit` honoured up to the cap, next_cursor names the next message. */
  function paged(messages: Array<{ ts: string }>, q: URLSearchParams): FakeAnswer {
    const limit = Math.min(Number(q.get('limit') ?? 100) || 100, cap);
    let start = 0;
    const cursor = q.get('cursor');
    if (cursor) {
      const ts = Buffer.from(cursor, 'base64')
        .toString('utf8')
        .replace(/^next_ts:/, '');
      start = messages.findIndex((m) => m.ts === ts);
      if (start < 0) return { json: { ok: false, error: 'invalid_cursor' } };
    }
    const page = messages.slice(start, start + limit);
    const next = messages[start + limit];
    return {
      json: {
        ok: true,
        messages: page,
        has_more: !!next,
        response_metadata: { next_cursor: next ? Buffer.from(`next_ts:${next.ts}`).toString('base64') : '' },
      },
    };
  }

  function route(req: FakeRequest, fake: ProviderFake): FakeAnswer {
    if (bearer(req) !== SLACK_FAKE_TOKEN) return { json: { ok: false, error: 'invalid_auth' } };
    const q = req.url.searchParams;
    const method = req.url.pathname.replace(/^\//, '');
    if (method === 'users.info') {
      const name = users.get(q.get('user') ?? '');
      if (!name) return { json: { ok: false, error: 'user_not_found' } };
      const handle = name.toLowerCase().replace(/\s+/g, '.');
      return {
        json: {
          ok: true,
          user: { id: q.get('user'), team_id: 'T0FAKE0001', name: handle, real_name: name, profile: { real_name: name, display_name: handle } },
        },
      };
    }
    if (method !== 'conversations.history' && method !== 'conversations.replies') return { json: { ok: false, error: 'unknown_method' } };
    if (q.get('channel') !== SLACK_FAKE_CHANNEL) return { json: { ok: false, error: 'channel_not_found' } };
    if (method === 'conversations.history') {
      const oldest = q.get('oldest');
      const latest = q.get('latest');
      const messages = [join, ...fake.records.map(message)]
        .filter((m) => (!oldest || m.ts > oldest) && (!latest || m.ts < latest))
        .sort((a, b) => (a.ts < b.ts ? 1 : -1));
      return paged(messages, q);
    }
    const parent = fake.records.find((r) => tsOfRecord(r) === q.get('ts'));
    if (!parent) return { json: { ok: false, error: 'thread_not_found' } };
    const head = message(parent);
    const thread = (replies.get(parent.id) ?? []).map((x) => ({
      type: 'message',
      user: x.user,
      text: escape(x.text),
      ts: x.ts,
      thread_ts: head.ts,
      parent_user_id: head.user,
    }));
    return paged([head, ...thread], q);
  }

  const fake = (await startProviderFake({
    route,
    connection: () => ({ credentials: { token: SLACK_FAKE_TOKEN }, config: { channel_id: SLACK_FAKE_CHANNEL } }),
  })) as SlackFake;

  // A message keeps the ts it was posted with: remember it when the record is first put.
  const put = fake.put.bind(fake);
  fake.put = (r) => {
    const record = put(r);
    if (!created.has(record.id)) created.set(record.id, tsOf(record.updated));
    return record;
  };
  let lastReply = 0;
  fake.reply = (parentId, text, author = 'Bruno Costa') => {
    if (!fake.records.some((r) => r.id === parentId)) throw new Error(`no record ${parentId}`);
    // Later than every message so far, and apart from the next put (which comes >= 1 s after the last one).
    const newest = Math.max(0, ...fake.records.map((r) => r.updated));
    const ms = (lastReply = Math.max(Date.now(), lastReply + 1000, newest + 500));
    const reply = { ts: tsOf(ms, 500), user: userId(author), text };
    replies.set(parentId, [...(replies.get(parentId) ?? []), reply]);
    return reply;
  };
  fake.tsOf = (id) => created.get(id) ?? '';
  return fake;
}

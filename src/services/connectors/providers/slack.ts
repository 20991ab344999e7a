import { slackProvider } from '../../../schemas/providers/slack.ts';
import { ProviderError } from '../http.ts';
import { defineConnector, type ConnectorRecord } from './connector.ts';

/**
 * One record per channel message that starts a thread (or stands alone), its replies appended as
 * `name: text` lines: a reply alone ("yes, ship it") means little without the message it answers,
 * and a thread is the unit people search for.
 *
 * conversations.history with `oldest` only returns parents posted after `oldest`, never an older
 * parent whose thread got a reply or whose text was edited. So an incremental sync reads the
 * parents of the last LOOKBACK_DAYS before the cursor and keeps those whose change time (the
 * largest of ts, latest_reply and edited.ts) is after the cursor: a reply to a thread older
 * than that window is not seen until the parent changes. The replies of a thread are fetched
 * only when it is kept.
 */
const LOOKBACK_DAYS = 7;
/** Slack's recommended page size (Slack caps it lower for non-Marketplace apps). */
const PAGE = '200';
/** Messages people wrote; joins, topic changes and the like are channel noise. */
const KEPT_SUBTYPES = new Set([undefined, 'bot_message', 'me_message', 'file_share', 'thread_broadcast']);

interface Message {
  type: string;
  subtype?: string;
  user?: string;
  username?: string;
  bot_profile?: { name?: string };
  text?: string;
  ts: string;
  thread_ts?: string;
  reply_count?: number;
  latest_reply?: string;
  edited?: { ts: string };
  files?: Array<{ name?: string }>;
}

interface MessagePage {
  messages: Message[];
  has_more?: boolean;
  response_metadata?: { next_cursor?: string };
}

interface UserInfo {
  user?: { name?: string; real_name?: string; profile?: { real_name?: string; display_name?: string } };
}

/** Slack's mrkdwn to plain text: `<url|label>`, `<@U1|name>`, `<#C1|name>`, `<!here>` and its three escapes. */
function plain(text: string): string {
  return text
    .replace(/<([^<>]*)>/g, (_, inner: string) => {
      const bar = inner.indexOf('|');
      const target = bar < 0 ? inner : inner.slice(0, bar);
      const label = bar < 0 ? '' : inner.slice(bar + 1);
      if (target.startsWith('@') || target.startsWith('#')) return label ? target[0] + label.replace(/^[@#]/, '') : target;
      if (target.startsWith('!')) return label || `@${target.slice(1).split('^')[0]}`;
      return label && label !== target ? `${label} (${target})` : target;
    })
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** A ts moved by whole seconds; it keeps the 10.6 digits width so it still compares as a string. */
const shiftTs = (ts: string, seconds: number) => `${Number(ts.split('.')[0]) + seconds}.${ts.split('.')[1] ?? '000000'}`;
const tsIso = (ts: string) => new Date(Math.floor(Number(ts) * 1000)).toISOString();

export const slack = defineConnector(slackProvider, async function* (ctx) {
  const channel = ctx.config.channel_id;
  const headers = { authorization: `Bearer ${ctx.credentials.token}` };

  // Slack answers most failures with HTTP 200 and {ok: false, error}.
  async function call<T>(method: string, params: Record<string, string | undefined>): Promise<T> {
    const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
    const body = await ctx.http.json<T & { ok?: boolean; error?: string }>(`${ctx.apiUrl}/${method}?${query}`, { headers });
    if (!body.ok) throw new ProviderError(`slack: ${body.error ?? 'unknown_error'}`);
    return body;
  }

  // Display names through users.info, once per user per sync; a token without users:read keeps the id.
  const names = new Map<string, string>();
  async function name(m: Message): Promise<string | null> {
    if (!m.user) return m.username ?? m.bot_profile?.name ?? null;
    if (!names.has(m.user)) {
      const info = await call<UserInfo>('users.info', { user: m.user }).catch((err: unknown) => {
        if (err instanceof ProviderError && err.message.startsWith('slack: ')) return null;
        throw err;
      });
      const u = info?.user;
      names.set(m.user, u?.profile?.real_name || u?.real_name || u?.profile?.display_name || u?.name || m.user);
    }
    return names.get(m.user)!;
  }

  const body = (m: Message) =>
    plain(
      m.text ||
        (m.files ?? [])
          .map((f) => f.name)
          .filter(Boolean)
          .join(', '),
    );

  async function record(m: Message, changed: string): Promise<ConnectorRecord> {
    const lines = [body(m)];
    if (m.reply_count) {
      let cursor: string | undefined;
      do {
        const page = await call<MessagePage>('conversations.replies', { channel, ts: m.ts, limit: PAGE, cursor });
        // The parent comes first (on every page, at times): it is already the record's first line.
        for (const r of page.messages) if (r.ts !== m.ts) lines.push(`${(await name(r)) ?? 'unknown'}: ${body(r)}`);
        cursor = page.has_more ? page.response_metadata?.next_cursor || undefined : undefined;
      } while (cursor);
    }
    return {
      id: `${channel}:${m.ts}`,
      text: lines.join('\n').trim(),
      url: `https://slack.com/archives/${channel}/p${m.ts.replace('.', '')}`,
      author: await name(m),
      updated_at: tsIso(changed),
      cursor: changed,
      extra: { channel, ts: m.ts, reply_count: m.reply_count ?? 0 },
    };
  }

  const since = ctx.cursor;
  const oldest = since ? shiftTs(since, -LOOKBACK_DAYS * 86_400) : undefined;
  let cursor: string | undefined;
  do {
    const page = await call<MessagePage>('conversations.history', { channel, limit: PAGE, oldest, cursor });
    const records: ConnectorRecord[] = [];
    for (const m of page.messages) {
      // A reply also sent to the channel belongs to its thread's record.
      if (m.type !== 'message' || !KEPT_SUBTYPES.has(m.subtype) || (m.thread_ts && m.thread_ts !== m.ts)) continue;
      const changed = [m.ts, m.latest_reply, m.edited?.ts]
        .filter((t): t is string => !!t)
        .sort()
        .at(-1)!;
      if (since && changed <= since) continue;
      const r = await record(m, changed);
      if (r.text) records.push(r);
    }
    if (records.length) yield records;
    cursor = page.has_more ? page.response_metadata?.next_cursor || undefined : undefined;
  } while (cursor);
});

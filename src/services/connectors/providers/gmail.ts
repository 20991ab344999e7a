import { convert } from 'html-to-text';
import type { z } from 'zod';
import { gmailProvider } from '../../../schemas/providers/gmail.ts';
import { defineConnector, type ConnectorRecord, type FetchContext } from './connector.ts';
import { mapLimit } from '../map-limit.ts';

/**
 * Gmail messages through the Gmail v1 API, newest first: the list gives ids, each message is
 * then read in full for its headers and body. The access token is renewed by the sync engine
 * before a sync (refresh_token, expires_at): this file only sends it.
 */

type Ctx = FetchContext<z.infer<typeof gmailProvider.credentials>, z.infer<typeof gmailProvider.config>>;

// Gmail allows up to 500 ids a page; each id costs a read, so pages stay short.
const PAGE_SIZE = 100;
// Message reads at once: a read costs 5 of the 250 quota units a user may spend per second.
const PARALLEL = 5;
// `after:` takes whole seconds and, by reports, matches the Date header rather than internalDate
// (earlier for mail delivered late, e.g. greylisted); and a message reaches search a little after it
// arrives, so one older than the last sync's newest may not have been listed yet. An hour of margin
// catches both; the messages of that hour the last sync stored come again, unchanged, and the
// engine skips them (comparing internalDate to the cursor here would drop the late ones again).
const MARGIN_SECONDS = 3600;

interface Part {
  mimeType: string;
  filename?: string;
  headers?: Array<{ name: string; value: string }>;
  body?: { size: number; data?: string; attachmentId?: string };
  parts?: Part[];
}

interface Message {
  id: string;
  threadId: string;
  labelIds?: string[];
  internalDate: string;
  payload: Part;
}

interface MessageList {
  // Absent, not empty, when nothing matches.
  messages?: Array<{ id: string; threadId: string }>;
  nextPageToken?: string;
}

const header = (part: Part, name: string) => part.headers?.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value.trim() ?? '';

/** The decoded bodies of the parts of this type, attachments (parts with a filename) left out. */
function bodies(part: Part, type: string): string[] {
  if (part.parts?.length) return part.parts.flatMap((p) => bodies(p, type));
  if (part.mimeType.toLowerCase() !== type || part.filename || !part.body?.data) return [];
  return [Buffer.from(part.body.data, 'base64url').toString('utf8')];
}

/** The plain-text parts (the text/plain side of multipart/alternative), else the HTML ones made text. */
function plainText(payload: Part): string {
  const plain = bodies(payload, 'text/plain');
  const text = plain.length
    ? plain.join('\n\n')
    : bodies(payload, 'text/html')
        // No wrapping (a sentence stays on one line), no link targets or images: tracking URLs are noise.
        .map((html) =>
          convert(html, {
            wordwrap: false,
            selectors: [
              { selector: 'a', options: { ignoreHref: true } },
              { selector: 'img', format: 'skip' },
            ],
          }),
        )
        .join('\n\n');
  return text.replace(/\r\n?/g, '\n').trim();
}

function toRecord(m: Message, cursor: string): ConnectorRecord {
  const subject = header(m.payload, 'Subject') || '(no subject)';
  const from = header(m.payload, 'From');
  const body = plainText(m.payload);
  return {
    id: m.id,
    text: `Subject: ${subject}\nFrom: ${from || '-'}${body ? `\n\n${body}` : ''}`,
    url: `https://mail.google.com/mail/u/0/#all/${m.id}`,
    author: from || null,
    updated_at: new Date(Number(m.internalDate)).toISOString(),
    cursor,
    extra: { thread_id: m.threadId, labels: m.labelIds ?? [] },
  };
}

// internalDate (ms since 1970) fixed to 13 digits, so that cursors compare as strings in time order.
const pad = (internalDate: string) => internalDate.padStart(13, '0');

export const gmail = defineConnector(gmailProvider, async function* (ctx: Ctx) {
  const auth = { authorization: `Bearer ${ctx.credentials.token}` };
  const since = ctx.cursor && /^\d{13}$/.test(ctx.cursor) ? ctx.cursor : null;
  const q = [
    // Parenthesised, so that the user's query, whatever its operators, is one term ANDed with the date.
    ...(ctx.config.query ? [`(${ctx.config.query})`] : []),
    ...(since ? [`after:${Math.floor(Number(since) / 1000) - MARGIN_SECONDS}`] : []),
  ].join(' ');
  let pageToken: string | undefined;
  do {
    const params = new URLSearchParams({ maxResults: String(PAGE_SIZE) });
    if (q) params.set('q', q);
    if (pageToken) params.set('pageToken', pageToken);
    const list = await ctx.http.json<MessageList>(`${ctx.apiUrl}/gmail/v1/users/me/messages?${params}`, { headers: auth });
    const messages = await mapLimit(list.messages ?? [], PARALLEL, (m) =>
      ctx.http.json<Message>(`${ctx.apiUrl}/gmail/v1/users/me/messages/${encodeURIComponent(m.id)}?format=full`, { headers: auth }),
    );
    // Drafts are left out: every autosave is a new message (a new id), each a half-written version.
    const records = messages.filter((m) => !m.labelIds?.includes('DRAFT')).map((m) => toRecord(m, pad(m.internalDate)));
    if (records.length) yield records;
    pageToken = list.nextPageToken;
  } while (pageToken);
});

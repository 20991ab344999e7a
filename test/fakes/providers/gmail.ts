import { bearer, startProviderFake, type FakeAnswer, type FakeRecord, type FakeRequest, type ProviderFake } from './base.ts';
import { googleError, UNAUTHENTICATED } from './google.ts';

/**
 * Gmail v1 as the gmail connector reads it: users.messages.list (q, maxResults, pageToken; newest
 * first, `after:` in epoch seconds) and users.messages.get?format=full (headers, MIME parts with
 * base64url bodies). A record is a message: title its Subject, body its text, author its From.
 * Messages are multipart/alternative (text/plain and text/html) unless `formats` says otherwise.
 */

export const GMAIL_TOKEN = 'ya29.fake-gmail-access-token';

/** alternative: text/plain + text/html; html: text/html only; plain: text/plain only; mixed: alternative plus a text attachment. */
export type GmailFormat = 'alternative' | 'html' | 'plain' | 'mixed';

export interface GmailFake extends ProviderFake {
  formats: Map<string, GmailFormat>;
  /** A message's labelIds by id (default INBOX, UNREAD, CATEGORY_PERSONAL). */
  labels: Map<string, string[]>;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const email = (name: string) => `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.com`;
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const from = (r: FakeRecord) => `${r.author} <${email(r.author)}>`;

function leaf(partId: string, mimeType: string, content: string, filename = '') {
  const headers = [{ name: 'Content-Type', value: `${mimeType}; charset="UTF-8"` }];
  if (filename) {
    // Gmail hands attachments by id (users.messages.attachments.get), never inline.
    headers.push({ name: 'Content-Disposition', value: `attachment; filename="${filename}"` });
    return { partId, mimeType, filename, headers, body: { attachmentId: `ANGjdJ-${partId}-fake`, size: Buffer.byteLength(content) } };
  }
  headers.push({ name: 'Content-Transfer-Encoding', value: 'quoted-printable' });
  return { partId, mimeType, filename, headers, body: { size: Buffer.byteLength(content), data: b64(content) } };
}

function payload(r: FakeRecord, format: GmailFormat) {
  // As mail programs write it: the text, a tracking pixel, and an unsubscribe link the plain side lacks.
  const html = `<div dir="ltr">${escapeHtml(r.body).split('\n').join('<br>')}<img src="https://example.com/pixel.gif"></div><p><a href="https://example.com/u?id=${r.id}">Unsubscribe</a></p>`;
  const headers = [
    { name: 'Delivered-To', value: 'me@example.com' },
    { name: 'Date', value: new Date(r.updated).toUTCString() },
    { name: 'From', value: from(r) },
    { name: 'To', value: 'me@example.com' },
    { name: 'Subject', value: r.title },
    { name: 'Message-ID', value: `<${r.id}@mail.example.com>` },
  ];
  const alternative = (prefix: string) => ({
    partId: prefix.replace(/\.$/, ''),
    mimeType: 'multipart/alternative',
    filename: '',
    headers: prefix ? [{ name: 'Content-Type', value: 'multipart/alternative; boundary="000000000000alt"' }] : [],
    body: { size: 0 },
    parts: [leaf(`${prefix}0`, 'text/plain', r.body), leaf(`${prefix}1`, 'text/html', html)],
  });
  const top = (part: Record<string, unknown> & { headers: unknown[] }, type: string) => ({
    ...part,
    partId: '',
    headers: [...headers, { name: 'Content-Type', value: type }],
  });
  if (format === 'plain') return top(leaf('', 'text/plain', r.body), 'text/plain; charset="UTF-8"');
  if (format === 'html') return top(leaf('', 'text/html', html), 'text/html; charset="UTF-8"');
  if (format === 'alternative') return top(alternative(''), 'multipart/alternative; boundary="000000000000alt"');
  return top(
    {
      mimeType: 'multipart/mixed',
      filename: '',
      headers: [],
      body: { size: 0 },
      parts: [alternative('0.'), leaf('1', 'text/plain', 'ATTACHED NOTES', 'notes.txt')],
    },
    'multipart/mixed; boundary="000000000000mix"',
  );
}

/** Gmail's q as the connector sends it: `after:<epoch s>` (on or after), `from:<text>`, parentheses, and words. */
function matcher(q: string): (r: FakeRecord) => boolean {
  const tests: Array<(r: FakeRecord) => boolean> = [];
  for (const term of q.replace(/[()]/g, ' ').split(/\s+/).filter(Boolean)) {
    let m: RegExpExecArray | null;
    if ((m = /^after:(\d+)$/.exec(term))) tests.push((r) => Math.floor(r.updated / 1000) >= Number(m![1]));
    else if ((m = /^from:(.+)$/i.exec(term))) tests.push((r) => from(r).toLowerCase().includes(m![1]!.toLowerCase()));
    else tests.push((r) => `${r.title} ${r.body} ${from(r)}`.toLowerCase().includes(term.toLowerCase()));
  }
  return (r) => tests.every((t) => t(r));
}

export async function startGmailFake(opts: { pageSize?: number } = {}): Promise<GmailFake> {
  const formats = new Map<string, GmailFormat>();
  const labels = new Map<string, string[]>();

  function route(req: FakeRequest, fake: ProviderFake): FakeAnswer {
    if (bearer(req) !== GMAIL_TOKEN) return UNAUTHENTICATED;
    const p = req.url.searchParams;
    if (req.url.pathname === '/gmail/v1/users/me/messages') {
      const found = fake.records.filter(matcher(p.get('q') ?? '')).sort((a, b) => b.updated - a.updated);
      const size = Math.min(Number(p.get('maxResults') ?? 100) || 100, opts.pageSize ?? 2);
      const offset = Number(p.get('pageToken') ?? 0);
      const page = found.slice(offset, offset + size);
      // Gmail leaves `messages` out when nothing matches, and gives nextPageToken only while there is more.
      return {
        json: {
          ...(page.length ? { messages: page.map((r) => ({ id: r.id, threadId: r.id })) } : {}),
          ...(offset + size < found.length ? { nextPageToken: String(offset + size).padStart(20, '0') } : {}),
          resultSizeEstimate: found.length,
        },
      };
    }
    const m = /^\/gmail\/v1\/users\/me\/messages\/([^/]+)$/.exec(req.url.pathname);
    if (!m) return { status: 404, body: 'Not Found' };
    const r = fake.records.find((x) => x.id === decodeURIComponent(m[1]!));
    if (!r) return googleError(404, 'Requested entity was not found.', 'notFound', 'NOT_FOUND');
    return {
      json: {
        id: r.id,
        threadId: r.id,
        labelIds: labels.get(r.id) ?? ['INBOX', 'UNREAD', 'CATEGORY_PERSONAL'],
        snippet: r.body.slice(0, 100),
        historyId: String(100000 + fake.records.indexOf(r)),
        internalDate: String(r.updated),
        sizeEstimate: 2048 + r.body.length * 2,
        payload: payload(r, formats.get(r.id) ?? 'alternative'),
      },
    };
  }

  const fake = await startProviderFake({
    route,
    connection: () => ({
      credentials: { token: GMAIL_TOKEN, refresh_token: '1//fake-refresh-token', expires_at: new Date(Date.now() + 3_600_000).toISOString() },
      config: {},
    }),
    // Gmail ids: 16 hex digits.
    newId: (n) => `18f${n.toString(16).padStart(13, '0')}`,
  });
  return Object.assign(fake, { formats, labels });
}

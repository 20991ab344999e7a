import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInboundSmtp } from '../src/services/email/smtp-listener.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The email drop end to end: the address and its rotation, the sender allowlist, the MTA's
 * HTTP handoff and the built-in SMTP listener, over a real server and database.
 */
const SECRET = 'inbound-secret-for-the-tests-0123456789';
const DOMAIN = 'in.test';
const ACCEPTED = { detail: 'accepted' };
/** A low size limit, so that oversize mail is cheap to make. */
const MAX_BYTES = 1_000_000;

interface Mail {
  from: string;
  to: string;
  subject?: string;
  text?: string;
  html?: string;
  messageId?: string;
  attachments?: Array<{ filename: string; content: string; contentType?: string; cid?: string }>;
}

/** An RFC 822 message as a mail client writes it. */
const compose = (m: Mail): Promise<Buffer> => new MailComposer({ ...m, date: new Date('2026-01-05T09:00:00Z') }).compile().build();

describe('email drop', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({
      ORGMEM_INBOUND_SECRET: SECRET,
      ORGMEM_EMAIL_DOMAIN: DOMAIN,
      ORGMEM_EMAIL_MAX_BYTES: String(MAX_BYTES),
      ORGMEM_EMBEDDER: 'hash',
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const accountEmail = (t: Tenant) => `${t.name}@test.local`;
  const addressOf = async (t: Tenant): Promise<string> => (await t.api('GET', '/v1/memory/email/address')).body.address;
  const inbound = (body: unknown, headers: Record<string, string> = { 'X-Inbound-Secret': SECRET }) =>
    call(server.url, 'POST', '/v1/memory/email/inbound', { body, headers });
  /** Hands a message over as an MTA would: envelope `from` is the header From unless given. */
  const deliver = async (m: Mail, envelopeFrom = m.from) => inbound({ to: m.to, from: envelopeFrom, raw: (await compose(m)).toString('base64') });
  /** The memories of a collection; none when the collection was never created. */
  async function memoriesIn(t: Tenant, collection = 'email'): Promise<any[]> {
    const res = await t.api('GET', `/v1/memory/collections/${collection}/memories?limit=200`);
    if (res.status === 404) return [];
    expect(res.status).toBe(200);
    return res.body;
  }

  it('gives each tenant one stable address of an unguessable token, created on first read', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const other = await newTenant(server.url, server.adminKey);
    const first = await t.api('GET', '/v1/memory/email/address');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ address: expect.stringMatching(/^[a-z0-9]{20,}@in\.test$/), collection: 'email' });
    expect((await t.api('GET', '/v1/memory/email/address')).body).toEqual(first.body);
    const reader = await t.newKey('reader', true);
    expect((await t.api('GET', '/v1/memory/email/address', undefined, reader.key)).body).toEqual(first.body);
    expect(await addressOf(other)).not.toBe(first.body.address);
  });

  it('rotate answers a new address at once; mail to the old one is dropped, mail to the new one stored', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const old = await addressOf(t);
    const rotated = await t.api('POST', '/v1/memory/email/address/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ address: expect.stringMatching(/^[a-z0-9]{20,}@in\.test$/), collection: 'email' });
    expect(rotated.body.address).not.toBe(old);
    expect(await addressOf(t)).toBe(rotated.body.address);

    const toOld = await deliver({ from: accountEmail(t), to: old, subject: 'to the old address', text: 'lost' });
    expect(toOld.status).toBe(202);
    expect(toOld.body).toEqual(ACCEPTED);
    expect(await memoriesIn(t)).toEqual([]);
    // Addresses are compared without case, as mail servers do.
    const toNew = await deliver({ from: accountEmail(t), to: rotated.body.address.toUpperCase(), subject: 'to the new address', text: 'kept' });
    expect(toNew.body).toEqual(ACCEPTED);
    expect((await memoriesIn(t)).map((m) => m.metadata.subject)).toEqual(['to the new address']);
  });

  it('senders: the account email by default, PUT replaces the list lowercased, junk is 422', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const own = { sender: accountEmail(t), default: true };
    expect((await t.api('GET', '/v1/memory/email/senders')).body).toEqual({ senders: [own] });

    const put = await t.api('PUT', '/v1/memory/email/senders', {
      senders: ['Ana@Example.com', ' @example.org ', 'bob@x.io', 'ana@example.com', accountEmail(t).toUpperCase()],
    });
    expect(put.status).toBe(200);
    const listed = {
      senders: [own, { sender: '@example.org', default: false }, { sender: 'ana@example.com', default: false }, { sender: 'bob@x.io', default: false }],
    };
    expect(put.body).toEqual(listed);
    expect((await t.api('GET', '/v1/memory/email/senders')).body).toEqual(listed);

    for (const senders of [
      ['not an address'],
      ['ana@localhost'],
      ['@'],
      ['a@@example.com'],
      ['ana@example.com', 'x@-bad-.com'],
      'ana@example.com',
      Array.from({ length: 101 }, (_, i) => `u${i}@example.com`),
    ]) {
      const res = await t.api('PUT', '/v1/memory/email/senders', { senders });
      expect(res.status, JSON.stringify(senders).slice(0, 60)).toBe(422);
    }
    expect((await t.api('GET', '/v1/memory/email/senders')).body).toEqual(listed);

    expect((await t.api('PUT', '/v1/memory/email/senders', { senders: [] })).body).toEqual({ senders: [own] });
  });

  it('read-only keys may read the address and senders but not rotate or change them', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const reader = await t.newKey('reader', true);
    const address = await addressOf(t);
    expect((await t.api('GET', '/v1/memory/email/senders', undefined, reader.key)).status).toBe(200);
    expect((await t.api('POST', '/v1/memory/email/address/rotate', undefined, reader.key)).status).toBe(403);
    expect((await t.api('PUT', '/v1/memory/email/senders', { senders: ['ana@example.com'] }, reader.key)).status).toBe(403);
    expect(await addressOf(t)).toBe(address);
    expect((await t.api('GET', '/v1/memory/email/senders')).body.senders).toHaveLength(1);
  });

  it('mail from the account email becomes one memory: the text, metadata, category, source and writer', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    const res = await deliver({
      from: `Ana Example <${accountEmail(t)}>`,
      to,
      subject: 'Quarterly plan',
      text: 'We ship the importer in March.\r\nBudget stays flat.',
      messageId: '<plan-1@test.local>',
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual(ACCEPTED);
    const [memory, ...rest] = await memoriesIn(t);
    expect(rest).toEqual([]);
    expect(memory.text).toBe(`Subject: Quarterly plan\nFrom: "Ana Example" <${accountEmail(t)}>\n\nWe ship the importer in March.\nBudget stays flat.`);
    expect(memory.metadata).toEqual({
      from: accountEmail(t),
      to: [to],
      subject: 'Quarterly plan',
      message_id: '<plan-1@test.local>',
      received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.now() - Date.parse(memory.metadata.received_at)).toBeLessThan(60_000);
    expect(memory).toMatchObject({ collection: 'email', category: 'email', source: 'email', created_by: { id: null, label: 'email' } });
    // When it happened is the mail's Date header, not when it arrived (docs/time.md); where from, its Message-ID.
    expect(memory).toMatchObject({
      observed_at: '2026-01-05T09:00:00.000Z',
      valid_from: '2026-01-05T09:00:00.000Z',
      provenance: { kind: 'mail', message_id: '<plan-1@test.local>' },
    });
    expect(memory.created_at).not.toBe(memory.observed_at);

    // The same message handed over again (an MTA retry) is stored once.
    await deliver({ from: accountEmail(t), to, subject: 'Quarterly plan', text: 'We ship the importer in March.', messageId: '<plan-1@test.local>' });
    expect(await memoriesIn(t)).toHaveLength(1);
  });

  it('takes mail from listed addresses and @domains only; anything else gets the same 202 and is dropped', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    await t.api('PUT', '/v1/memory/email/senders', { senders: ['@example.org', 'bob@x.io'] });
    const from = async (sender: string, envelope?: string) => {
      const res = await deliver({ from: sender, to, subject: `from ${sender}`, text: 'hello' }, envelope);
      expect(res.status).toBe(202);
      expect(res.body).toEqual(ACCEPTED);
    };
    await from('Ana@Example.org');
    await from('bob@x.io');
    await from('mallory@evil.example');
    await from('eve@sub.example.org');
    await from('bobby@x.io');
    // The header From is what is checked, whatever the envelope sender says.
    await from('mallory@evil.example', 'bob@x.io');
    await from('carol@example.org', 'bounces+123@mailer.example');
    const subjects = (await memoriesIn(t)).map((m) => m.metadata.subject).sort();
    expect(subjects).toEqual(['from Ana@Example.org', 'from bob@x.io', 'from carol@example.org']);
  });

  it('converts HTML-only mail to text, and strips NUL and lone surrogates', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    await deliver({
      from: accountEmail(t),
      to,
      subject: 'Newsletter',
      html: '<html><head><style>p{color:red}</style></head><body><h1>Release</h1><p>Hello <b>world</b>, see <a href="https://example.com/notes">the notes</a>.</p><ul><li>one</li><li>two</li></ul></body></html>',
    });
    const [html] = await memoriesIn(t);
    expect(html.text).toMatch(/^Subject: Newsletter\nFrom: .+\n\n/);
    expect(html.text).toContain('Hello world, see the notes [https://example.com/notes].');
    expect(html.text).toMatch(/one[\s\S]*two/);
    expect(html.text).not.toMatch(/[<>{}]|color/);

    // A UTF-16 encoded word can carry a lone surrogate, and any part a NUL: PostgreSQL takes neither.
    const subject = `=?utf-16le?B?${Buffer.from('nul\u0000 and \uD800lone', 'utf16le').toString('base64')}?=`;
    const body = Buffer.from('keep\u0000this text').toString('base64');
    const raw = `From: ${accountEmail(t)}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <odd@test.local>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n`;
    const res = await inbound({ to, from: accountEmail(t), raw: Buffer.from(raw).toString('base64') });
    expect(res.status).toBe(202);
    const odd = (await memoriesIn(t)).find((m) => m.metadata.message_id === '<odd@test.local>');
    expect(odd.text).toBe(`Subject: nul and lone\nFrom: ${accountEmail(t)}\n\nkeepthis text`);
    expect(odd.metadata.subject).toBe('nul and lone');
  });

  it('cuts a long body at a paragraph boundary to fit 10,000 characters and says so', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    const paragraphs = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} ${'word '.repeat(10).trim()}.`);
    await deliver({ from: accountEmail(t), to, subject: 'Long', text: paragraphs.join('\n\n') });
    const [memory] = await memoriesIn(t);
    expect(memory.text.length).toBeLessThanOrEqual(10_000);
    expect(memory.text.length).toBeGreaterThan(9_000);
    expect(memory.text.endsWith('word.')).toBe(true);
    expect(memory.metadata.truncated).toBe(true);
  });

  it('answers 400 to a raw that is not base64 or not a message, 422 to a body without fields', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    for (const raw of ['this is not base64!', Buffer.from('just some words, no headers').toString('base64'), Buffer.from([0, 1, 2, 255]).toString('base64')]) {
      const res = await inbound({ to, from: 'x@example.com', raw });
      expect(res.status, raw).toBe(400);
      expect(res.body.detail).toMatch(/raw/);
    }
    // base64 wrapped in lines, as `base64` writes it by default, is fine.
    const wrapped = (await compose({ from: accountEmail(t), to, subject: 'wrapped', text: 'x'.repeat(300) })).toString('base64').replace(/.{76}/g, '$&\n');
    expect((await inbound({ to: [to], raw: wrapped })).status).toBe(202);
    expect((await memoriesIn(t)).map((m) => m.metadata.subject)).toEqual(['wrapped']);
    expect((await inbound({ from: 'x@example.com', raw: 'AAAA' })).status).toBe(422);
    expect((await inbound({ to, from: 'x@example.com' })).status).toBe(422);

    const huge = await compose({ from: accountEmail(t), to, subject: 'huge', text: 'y'.repeat(MAX_BYTES) });
    const res = await inbound({ to, from: accountEmail(t), raw: huge.toString('base64') });
    expect(res.status).toBe(413);
    expect(res.body.detail).toContain(String(MAX_BYTES));
    expect((await memoriesIn(t)).map((m) => m.metadata.subject)).toEqual(['wrapped']);
  });

  it('answers 401 without the secret or with a wrong one, and stores nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    const raw = (await compose({ from: accountEmail(t), to, subject: 'sneaky', text: 'x' })).toString('base64');
    const attempts: Array<Record<string, string>> = [
      {},
      { 'X-Inbound-Secret': 'wrong-secret-wrong-secret-wrong-secret' },
      { 'X-Inbound-Secret': '' },
      { Authorization: `Bearer ${t.key}` },
    ];
    for (const headers of attempts) {
      const res = await inbound({ to, from: accountEmail(t), raw }, headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
    }
    expect(await memoriesIn(t)).toEqual([]);
  });

  it('ingests attachments into the same collection; inline images of the HTML are left out', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    await deliver({
      from: accountEmail(t),
      to,
      subject: 'Notes attached',
      html: '<p>See the attached notes.</p><img src="cid:logo@test">',
      attachments: [
        { filename: 'notes.txt', content: 'The code word for the launch is heliotrope.', contentType: 'text/plain' },
        { filename: 'agenda.html', content: '<html><body><h1>Agenda</h1><p>Review the heliotrope budget.</p></body></html>', contentType: 'text/html' },
        { filename: 'logo.png', content: 'not really a png', contentType: 'image/png', cid: 'logo@test' },
      ],
    });
    // The worker may already have stored the attachments, which list before the mail (newest first).
    const mail = (await memoriesIn(t)).find((m) => m.source === 'email' && m.category === 'email');
    expect(mail).toBeDefined();
    expect(mail.metadata.batch_id).toEqual(expect.any(String));
    const batch = await until('the attachments batch', async () => {
      const res = await t.api('GET', `/v1/memory/ingest/batch/${mail.metadata.batch_id}`);
      return res.body.complete ? res.body : undefined;
    });
    expect(batch).toMatchObject({ total: 2, done: 2, failed: 0 });
    const documents = (await memoriesIn(t)).filter((m) => m.category === 'document');
    expect(documents.every((m) => m.source === 'email' && m.collection === 'email' && m.created_by.label === 'email')).toBe(true);
    expect(documents.map((m) => m.metadata.file).sort()).toEqual(['agenda.html', 'notes.txt']);
    expect(documents.find((m) => m.metadata.file === 'notes.txt').text).toContain('heliotrope');
  });

  it('reports on the mail the attachments it did not queue: past the 50 of a message', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    const attachments = Array.from({ length: 200 }, (_, i) => ({ filename: `part-${i}.txt`, content: `Attachment number ${i}.`, contentType: 'text/plain' }));
    expect((await deliver({ from: accountEmail(t), to, subject: 'Many parts', text: 'See the parts.', attachments })).status).toBe(202);
    const mail = (await memoriesIn(t)).find((m) => m.category === 'email');
    expect(mail.metadata.attachments_skipped_count).toBe(150);
    // The first 50 skipped are listed, each with its reason; the count has them all.
    expect(mail.metadata.attachments_skipped).toEqual(
      attachments.slice(50, 100).map((a) => ({ filename: a.filename, reason: 'More than 50 attachments in the message' })),
    );
    const batch = await t.api('GET', `/v1/memory/ingest/batch/${mail.metadata.batch_id}`);
    expect(batch.body.total).toBe(50);
    expect(batch.body.files.map((f: { filename: string }) => f.filename).sort()).toEqual(
      attachments
        .slice(0, 50)
        .map((a) => a.filename)
        .sort(),
    );
  });

  it('delivers into a restricted collection, attachments too: mail is stored by the "email" service identity, which grants do not name', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const to = await addressOf(t);
    const agent = await t.newKey('agent');
    expect((await t.api('POST', '/v1/memory/collections', { name: 'email' })).status).toBe(201);
    // Restricted to the agent alone: the account's own key may not read it.
    expect((await t.api('PUT', '/v1/memory/collections/email/grants', { agent_key_id: agent.id, can_read: true, can_write: true })).status).toBe(200);
    const res = await deliver({
      from: accountEmail(t),
      to,
      subject: 'still delivered',
      text: 'The gate code changed.',
      attachments: [{ filename: 'code.txt', content: 'The new gate code is 7781.', contentType: 'text/plain' }],
    });
    expect(res.body).toEqual(ACCEPTED);
    expect((await t.api('GET', '/v1/memory/collections/email/memories')).status).toBe(403);
    const mail = (await t.api('GET', '/v1/memory/collections/email/memories', undefined, agent.key)).body.find((m: any) => m.category === 'email');
    expect(mail.created_by).toEqual({ id: null, label: 'email' });
    const batch = await until('the attachment', async () => {
      const status = await t.api('GET', `/v1/memory/ingest/batch/${mail.metadata.batch_id}`, undefined, agent.key);
      return status.body.complete ? status.body : undefined;
    });
    expect(batch).toMatchObject({ total: 1, done: 1, failed: 0 });
  });

  it('answers 401 to everyone when no secret is configured', async () => {
    const closed = await startServer({ ORGMEM_EMAIL_DOMAIN: DOMAIN, ORGMEM_EMBEDDER: 'hash' }, { worker: false });
    try {
      const t = await newTenant(closed.url, closed.adminKey);
      const to = (await t.api('GET', '/v1/memory/email/address')).body.address;
      const raw = (await compose({ from: accountEmail(t), to, subject: 'x', text: 'x' })).toString('base64');
      const attempts: Array<Record<string, string>> = [{}, { 'X-Inbound-Secret': SECRET }, { 'X-Inbound-Secret': '' }];
      for (const headers of attempts) {
        expect((await call(closed.url, 'POST', '/v1/memory/email/inbound', { body: { to, from: accountEmail(t), raw }, headers })).status).toBe(401);
      }
    } finally {
      await closed.close();
    }
  });

  describe('the SMTP listener', () => {
    let smtp: Awaited<ReturnType<typeof startInboundSmtp>>;
    const transport = () => nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true });

    beforeAll(async () => {
      smtp = await startInboundSmtp(server.app, { host: '127.0.0.1', port: 0 });
    });
    afterAll(async () => {
      await smtp?.close();
    });

    it('delivers mail for the drop domain like the HTTP handoff', async () => {
      const t = await newTenant(server.url, server.adminKey);
      const to = await addressOf(t);
      const info = await transport().sendMail({ from: accountEmail(t), to, subject: 'By SMTP', text: 'Sent over SMTP.', messageId: '<smtp-1@test.local>' });
      expect(info.accepted).toEqual([to]);
      const [memory, ...rest] = await memoriesIn(t);
      expect(rest).toEqual([]);
      expect(memory.text).toBe(`Subject: By SMTP\nFrom: ${accountEmail(t)}\n\nSent over SMTP.`);
      expect(memory.metadata).toMatchObject({ from: accountEmail(t), to: [to], message_id: '<smtp-1@test.local>' });

      // Unknown tokens and senders not allowed are taken like any other mail (no recipient oracle), then dropped.
      const unknown = `${'z'.repeat(24)}@${DOMAIN}`;
      expect((await transport().sendMail({ from: accountEmail(t), to: unknown, subject: 'nobody', text: 'x' })).accepted).toEqual([unknown]);
      expect((await transport().sendMail({ from: 'mallory@evil.example', to, subject: 'spam', text: 'x' })).accepted).toEqual([to]);
      expect(await memoriesIn(t)).toHaveLength(1);
    });

    it('refuses recipients of any other domain with 550: it is no open relay', async () => {
      const t = await newTenant(server.url, server.adminKey);
      const err = await transport()
        .sendMail({ from: accountEmail(t), to: 'someone@example.com', subject: 'relay?', text: 'x' })
        .then(
          () => null,
          (e: { responseCode?: number; rejected?: string[] }) => e,
        );
      expect(err?.responseCode).toBe(550);
      expect(err?.rejected).toEqual(['someone@example.com']);
      expect(await memoriesIn(t)).toEqual([]);
    });

    it('refuses a message over the size limit with 552', async () => {
      const t = await newTenant(server.url, server.adminKey);
      const to = await addressOf(t);
      const err = await transport()
        .sendMail({ from: accountEmail(t), to, subject: 'huge', text: 'y'.repeat(MAX_BYTES) })
        .then(
          () => null,
          (e: { responseCode?: number }) => e,
        );
      expect(err?.responseCode).toBe(552);
      expect(await memoriesIn(t)).toEqual([]);
    });
  });
});

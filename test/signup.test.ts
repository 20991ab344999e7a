import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { startSmtp } from './fakes/smtp.ts';

const LINK_SENT = { detail: 'If the address can be used, a link was sent.' };
const PUBLIC_URL = 'https://memory.example.test';
const LINK = /https:\/\/memory\.example\.test(\/v1\/memory\/reveal\/[A-Za-z0-9_-]{43})\b/;
const email = () => `user-${randomBytes(4).toString('hex')}@example.test`;

describe('signup, recover-key and reveal over SMTP', () => {
  let server: TestServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  const post = (path: string, body: unknown) => call(server.url, 'POST', path, { body });
  const get = (path: string, key?: string) => call(server.url, 'GET', path, { key });

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startServer({
      ORGMEM_EMBEDDER: 'hash',
      ORGMEM_SMTP_URL: smtp.url,
      ORGMEM_MAIL_FROM: 'orgmem <keys@example.test>',
      ORGMEM_PUBLIC_URL: PUBLIC_URL,
      ORGMEM_SIGNUP_PER_EMAIL_PER_HOUR: '3',
      ORGMEM_SIGNUP_PER_IP_PER_HOUR: '30',
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  /** The path of the reveal link in a mail (the host is the configured public URL). */
  const linkIn = (text: string) => {
    const m = LINK.exec(text);
    if (!m) throw new Error(`no reveal link in: ${text}`);
    return m[1]!;
  };

  it('signs up a free tenant whose key is revealed once through the mailed link', async () => {
    const address = email();
    const res = await post('/v1/memory/signup', { email: address });
    expect(res.status).toBe(202);
    expect(res.body).toEqual(LINK_SENT);

    const mail = await smtp.next(address);
    expect(mail.subject).toBe('Your orgmem API key');
    const path = linkIn(mail.text);
    const revealed = await get(path);
    expect(revealed.status).toBe(200);
    expect(revealed.body.api_key).toMatch(/^mv_[A-Za-z0-9_-]{43}$/);
    expect(revealed.body.tenant).toMatchObject({ name: address, email: address, tier: 'free', is_admin: false, limits: { rate_limit_per_minute: 60 } });
    const me = await get('/v1/memory/admin/me', revealed.body.api_key);
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(revealed.body.tenant.id);

    // One use only.
    expect((await get(path)).status).toBe(404);
    // The tenant has exactly the revealed key.
    expect((await get('/v1/memory/agents', revealed.body.api_key)).body.map((a: { label: string }) => a.label)).toEqual(['default']);
  });

  it('answers the same for an address that has an account, which gets a notice and no second tenant', async () => {
    const address = email();
    await post('/v1/memory/signup', { email: address, name: 'first' });
    linkIn((await smtp.next(address)).text);
    const again = await post('/v1/memory/signup', { email: address.toUpperCase(), name: 'second' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(LINK_SENT);
    const notice = await smtp.next(address, 1);
    expect(notice.text).toMatch(/already has an account/);
    expect(LINK.test(notice.text)).toBe(false);
    const tenants = await server.app.db.query<{ name: string }>('select name from tenants where lower(email) = lower($1)', [address]);
    expect(tenants).toEqual([{ name: 'first' }]);
  });

  it('recovers a key by mail without revealing whether the address has an account', async () => {
    const address = email();
    await post('/v1/memory/signup', { email: address });
    const first = await get(linkIn((await smtp.next(address)).text));
    const firstKey = first.body.api_key as string;

    const stranger = email();
    const unknown = await post('/v1/memory/recover-key', { email: stranger });
    const recover = await post('/v1/memory/recover-key', { email: address });
    expect([recover.status, unknown.status]).toEqual([202, 202]);
    expect(recover.body).toEqual(LINK_SENT);
    expect(unknown.body).toEqual(LINK_SENT);

    const mail = await smtp.next(address, 1);
    expect(mail.subject).toBe('Your new orgmem API key');
    const revealed = await get(linkIn(mail.text));
    expect(revealed.status).toBe(200);
    expect(revealed.body.tenant.id).toBe(first.body.tenant.id);
    expect(revealed.body.api_key).not.toBe(firstKey);
    // The new key works and the old one still does; the recovered key is labelled as such.
    expect((await get('/v1/memory/admin/me', revealed.body.api_key)).status).toBe(200);
    expect((await get('/v1/memory/admin/me', firstKey)).status).toBe(200);
    const agents = await get('/v1/memory/agents', firstKey);
    expect(agents.body.map((a: { label: string }) => a.label)).toEqual(['default', 'recovered']);
    // The address without an account got nothing: no link was made for it, so no mail was queued.
    expect(smtp.mails.filter((m) => m.to.includes(stranger))).toEqual([]);
  });

  it('refuses unknown, malformed and expired links with 404', async () => {
    const address = email();
    await post('/v1/memory/signup', { email: address });
    const path = linkIn((await smtp.next(address)).text);
    const hash = createHash('sha256').update(path.split('/').pop()!).digest('hex');
    const expired = await server.app.db.query(`update reveal_tokens set expires_at = now() - interval '1 second' where token_hash = $1 returning 1`, [hash]);
    expect(expired).toHaveLength(1);
    expect((await get(path)).status).toBe(404);
    expect((await get(`/v1/memory/reveal/${randomBytes(32).toString('base64url')}`)).status).toBe(404);
    expect((await get('/v1/memory/reveal/short')).status).toBe(404);
  });

  it('validates the body (422)', async () => {
    for (const body of [{}, { email: 'not-an-email' }, { email: 42 }, { email: email(), name: '' }]) {
      expect((await post('/v1/memory/signup', body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await post('/v1/memory/recover-key', { email: 'nope' })).status).toBe(422);
    expect((await call(server.url, 'POST', '/v1/memory/signup', { rawBody: '{"email":' })).status).toBe(400);
  });

  it('records sign-up and reveal in the audit log', async () => {
    const address = email();
    await post('/v1/memory/signup', { email: address });
    const revealed = await get(linkIn((await smtp.next(address)).text));
    const rows = await server.app.db.query<{ action: string; actor_label: string | null }>(
      'select action, actor_label from audit_log where tenant_id = $1 order by at, id',
      [revealed.body.tenant.id],
    );
    expect(rows).toEqual([
      { action: 'account.signup', actor_label: null },
      { action: 'account.reveal', actor_label: 'default' },
    ]);
  });

  it('rate-limits per email address and per client address (429 with Retry-After)', async () => {
    const address = email();
    for (let i = 0; i < 3; i++) expect((await post('/v1/memory/recover-key', { email: address })).status).toBe(202);
    const limited = await post('/v1/memory/recover-key', { email: address });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Signup and recovery share the address's budget.
    expect((await post('/v1/memory/signup', { email: address })).status).toBe(429);

    const [ip] = await server.app.db.query<{ count: number }>(`select count from rate_limits where bucket like 'ip:%'`);
    for (let i = ip!.count; i < 30; i++) expect((await post('/v1/memory/recover-key', { email: email() })).status).toBe(202);
    const byIp = await post('/v1/memory/signup', { email: email() });
    expect(byIp.status).toBe(429);
    expect(byIp.body.detail).toMatch(/client address/);
  });
});

describe('signup without SMTP', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  });
  afterAll(() => server?.close());

  it('keeps the mail in the outbox table, and the link in it works', async () => {
    const address = email();
    expect((await call(server.url, 'POST', '/v1/memory/signup', { body: { email: address } })).status).toBe(202);
    let body: string | undefined;
    for (let i = 0; i < 100 && !body; i++) {
      [{ body } = { body: undefined }] = await server.app.db.query<{ body: string }>('select body from mail_outbox where recipient = $1', [address]);
      if (!body) await new Promise((r) => setTimeout(r, 100));
    }
    const path = /(\/v1\/memory\/reveal\/[A-Za-z0-9_-]{43})/.exec(body ?? '')?.[1];
    expect(path).toBeDefined();
    const revealed = await call(server.url, 'GET', path!);
    expect(revealed.status).toBe(200);
    expect(revealed.body.tenant.email).toBe(address);
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/core/ids.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { pkce, registerClient, startRequest } from './support/oauth-client.ts';
import { startForger, type Forger } from './support/oidc-forger.ts';
import { startServer, type TestServer } from './support/server.ts';
import { browse, CookieJar, withSession } from './support/signin.ts';

/*
 * Every refusal of the sign-in (docs/sign-in.md, "Refusals"), one by one, against a provider whose
 * ID tokens the test writes (test/support/oidc-forger.ts): a browser is sent back to the sign-in
 * page with the reason and gets no cookie, an API caller a 400 or 403 `{detail}`. Then CSRF on
 * every call a session cookie authenticates.
 */

let server: TestServer;
let url: string;
let idp: Forger;
let t: Tenant;
const domain = `corp-${randomBytes(3).toString('hex')}.example`;
const isBack = (u: URL) => u.origin === url && !u.pathname.startsWith('/v1/auth/');

/** A sign-in as a browser makes it: where it ended, its reason when refused, and the cookie if any. */
async function attempt(start = `/v1/auth/oidc/start?tenant=${t.id}`): Promise<{ error: string | null; landed: URL; cookie: string | undefined }> {
  const jar = new CookieJar();
  const { visited } = await browse(`${url}${start}`, jar, isBack);
  const landed = new URL(visited.at(-1)!);
  return { error: landed.searchParams.get('signin_error'), landed, cookie: jar.get(url, 'orgmem_session') };
}

/** The provider's answer at the callback, kept instead of followed: the URL to replay. */
async function callbackUrl(): Promise<string> {
  const { visited } = await browse(`${url}/v1/auth/oidc/start?tenant=${t.id}`, new CookieJar(), (u) => u.pathname === '/v1/auth/oidc/callback');
  return visited.at(-1)!;
}

async function signedIn(email: string) {
  idp.next({ sub: `sub-${email}`, email });
  const { cookie, error } = await attempt();
  expect(error).toBeNull();
  const s = await withSession(url, 'GET', '/v1/auth/session', { cookie: cookie! });
  return { cookie: cookie!, csrf: s.body.csrf as string, person: s.body.person as { id: string } };
}

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  idp = await startForger();
  t = await newTenant(url, server.adminKey);
  const res = await t.api('PUT', '/v1/memory/identity/config', {
    issuer: idp.issuer,
    client_id: idp.clientId,
    allowed_domains: [domain],
    allowed_groups: ['orgmem-users'],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});

afterAll(async () => {
  await idp?.close();
  await server?.close();
});

describe('the ID token', () => {
  const email = () => `ana-${randomBytes(3).toString('hex')}@${domain}`;

  it('is accepted as the provider sends it', async () => {
    idp.next({ sub: 'ok', email: email() });
    const { error, cookie, landed } = await attempt();
    expect(error).toBeNull();
    expect(landed.pathname).toBe('/collections');
    expect(cookie).toMatch(/^mvs_/);
  });

  it.each([
    ['of another issuer', { alter: (c: Record<string, unknown>) => ({ ...c, iss: 'https://evil.example' }) }, /unexpected JWT "iss" \(issuer\) claim value/],
    ['for another audience', { alter: (c: Record<string, unknown>) => ({ ...c, aud: 'another-client' }) }, /unexpected JWT "aud" \(audience\) claim value/],
    [
      'expired',
      { alter: (c: Record<string, unknown>) => ({ ...c, iat: Math.floor(Date.now() / 1000) - 1200, exp: Math.floor(Date.now() / 1000) - 600 }) },
      /unexpected JWT "exp" \(expiration time\) claim value, expiration is past current timestamp/,
    ],
    ['with another nonce', { alter: (c: Record<string, unknown>) => ({ ...c, nonce: 'not-the-one-sent' }) }, /unexpected ID Token "nonce" claim value/],
    ['signed by another key', { foreignKey: true }, /^The identity provider.s answer was refused: JWT signature verification failed$/],
  ])('%s is refused', async (_what, opts, reason) => {
    idp.next({ sub: `s-${randomBytes(3).toString('hex')}`, email: email() }, opts);
    const { error, cookie, landed } = await attempt();
    expect(landed.pathname).toBe('/');
    expect(error).toMatch(/^The identity provider's answer was refused: /);
    expect(error).toMatch(reason);
    expect(cookie).toBeUndefined();
  });

  it('replayed in another sign-in is refused (its nonce was for the first)', async () => {
    idp.next({ sub: 'replay', email: email() });
    expect((await attempt()).error).toBeNull();
    idp.next({}, { idToken: idp.lastIdToken() });
    const { error, cookie } = await attempt();
    expect(error).toMatch(/unexpected ID Token "nonce" claim value/);
    expect(cookie).toBeUndefined();
  });

  it('without a verified e-mail is refused', async () => {
    const address = email();
    idp.next({ sub: 'unverified', email: address, email_verified: false });
    expect((await attempt()).error).toBe(`${address} is not verified by the identity provider`);
    idp.next({ sub: 'no-claim', email: address, email_verified: undefined });
    expect((await attempt()).error).toBe(`${address} is not verified by the identity provider`);
  });
});

describe('the answer at the callback', () => {
  it('is taken once: the same callback again, its code or its state, is refused', async () => {
    idp.next({ sub: 'once', email: `once@${domain}` });
    const cb = await callbackUrl();
    const first = await fetch(cb, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('set-cookie')).toMatch(/^orgmem_session=mvs_/);
    const again = await call(cb, 'GET', '');
    expect(again.status).toBe(400);
    expect(again.body.detail).toBe('This sign-in is unknown, already used or expired: start it again');

    // The code, with the state of a new sign-in: the provider refuses a used code.
    const code = new URL(cb).searchParams.get('code')!;
    const fresh = new URL(await callbackUrl());
    fresh.searchParams.set('code', code);
    const replayed = await call(fresh.href, 'GET', '');
    expect(replayed.status).toBe(400);
    expect(replayed.body.detail).toBe("The identity provider's answer was refused: invalid_grant: the code is unknown, used or not for this verifier");
  });

  it('with a state it never gave, or none, is refused', async () => {
    const unknown = await call(url, 'GET', `/v1/auth/oidc/callback?code=x&state=${randomBytes(16).toString('base64url')}`);
    expect(unknown).toMatchObject({ status: 400, body: { detail: 'This sign-in is unknown, already used or expired: start it again' } });
    const none = await call(url, 'GET', '/v1/auth/oidc/callback?code=x');
    expect(none).toMatchObject({ status: 400, body: { detail: 'The provider sent no state: start the sign-in again' } });
    // A browser is sent to the sign-in page with the reason.
    const page = await fetch(`${url}/v1/auth/oidc/callback?code=x`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(page.status).toBe(303);
    expect(new URL(page.headers.get('location')!, url).searchParams.get('signin_error')).toBe('The provider sent no state: start the sign-in again');
  });

  it('that is expired is refused', async () => {
    const cb = await callbackUrl();
    await server.app.platform.query("update oidc_signins set expires_at = now() - interval '1 second'");
    expect((await call(cb, 'GET', '')).body.detail).toBe('This sign-in is unknown, already used or expired: start it again');
  });

  it("that is the provider's refusal is refused with its reason", async () => {
    const cb = new URL(await callbackUrl());
    cb.searchParams.delete('code');
    cb.searchParams.set('error', 'access_denied');
    cb.searchParams.set('error_description', 'The user said no');
    expect(await call(cb.href, 'GET', '')).toMatchObject({ status: 403, body: { detail: 'The identity provider refused the sign-in: The user said no' } });
  });
});

describe('who may sign in', () => {
  it('refuses a domain and groups not allowed, takes an allowed group', async () => {
    idp.next({ sub: 'outsider', email: 'x@elsewhere.example', groups: ['other'] });
    expect((await attempt()).error).toBe(
      'x@elsewhere.example is not a member of this organization: its domain and groups are not allowed, and it was not invited',
    );
    idp.next({ sub: 'grouped', email: 'y@elsewhere.example', groups: ['orgmem-users'] });
    expect((await attempt()).error).toBeNull();
  });

  it.each(['suspended', 'removed'])('refuses a %s person', async (state) => {
    const email = `${state}@${domain}`;
    const { person } = await signedIn(email);
    await server.app.platform.query('update people set state = $3 where tenant_id = $1 and id = $2', [t.id, person.id, state]);
    idp.next({ sub: `sub-${email}`, email });
    const { error, cookie } = await attempt();
    expect(error).toBe(`${email} is ${state} in this organization`);
    expect(cookie).toBeUndefined();
  });

  it('refuses a second account of the provider with the e-mail of a person already signed in', async () => {
    const email = `twin@${domain}`;
    await signedIn(email);
    idp.next({ sub: 'another-sub', email });
    expect((await attempt()).error).toBe(`${email} belongs to another account of the identity provider`);
  });

  it('refuses where to go back that is not a path of this dashboard', async () => {
    for (const to of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'collections']) {
      const res = await call(url, 'GET', `/v1/auth/oidc/start?tenant=${t.id}&return_to=${encodeURIComponent(to)}`);
      expect(res, to).toMatchObject({ status: 400, body: { detail: 'return_to must be a path of this dashboard, such as /collections' } });
    }
  });

  it('refuses a start naming no organization, an unknown one, or one without a provider', async () => {
    expect((await call(url, 'GET', '/v1/auth/oidc/start')).body.detail).toBe('Give tenant (your organization id) or email');
    expect(await call(url, 'GET', `/v1/auth/oidc/start?tenant=${newId()}`)).toMatchObject({
      status: 404,
      body: { detail: 'This organization signs in with API keys only: it has no identity provider' },
    });
    expect((await call(url, 'GET', '/v1/auth/oidc/start?tenant=not-an-id')).status).toBe(404);
    expect((await call(url, 'GET', '/v1/auth/oidc/start?email=nobody')).status).toBe(400);
  });
});

describe('CSRF on every call a session cookie authenticates', () => {
  const missingOrWrong = (csrf: string) => [undefined, 'wrong', `${csrf}x`];

  it('refuses signing out without the token', async () => {
    const s = await signedIn(`out@${domain}`);
    for (const csrf of missingOrWrong(s.csrf)) {
      const res = await withSession(url, 'POST', '/v1/auth/signout', { cookie: s.cookie, csrf });
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/^CSRF check failed/);
    }
    expect((await withSession(url, 'GET', '/v1/auth/session', { cookie: s.cookie })).status).toBe(200);
  });

  it('refuses a REST write, a tRPC mutation and an MCP call without the token, and writes nothing', async () => {
    const s = await signedIn(`writer@${domain}`);
    for (const csrf of missingOrWrong(s.csrf)) {
      const rest = await withSession(url, 'POST', '/v1/memory/collections/csrf/memories', { cookie: s.cookie, csrf }, { text: 'forged' });
      expect(rest.status).toBe(403);
      expect(rest.body.detail).toMatch(/^CSRF check failed/);
      const headers: Record<string, string> = { cookie: `orgmem_session=${s.cookie}` };
      if (csrf) headers['x-orgmem-csrf'] = csrf;
      const trpc = await call(url, 'POST', '/trpc/memories.create', { headers, body: { collection: 'csrf', text: 'forged' } });
      expect(trpc.status).toBe(403);
      const mcp = await call(url, 'POST', '/v1/mcp', {
        headers: { ...headers, accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(mcp.status).toBe(403);
    }
    expect((await t.api('GET', '/v1/memory/collections/csrf/memories')).status).toBe(404);
    // With the token each is the person's own call.
    expect((await withSession(url, 'POST', '/v1/memory/collections/csrf/memories', s, { text: 'mine' })).status).toBe(201);
  });

  it('refuses the OAuth consent decision without the token, deciding nothing', async () => {
    const s = await signedIn(`consent@${domain}`);
    await server.app.platform.query("update people set role = 'admin' where tenant_id = $1 and id = $2", [t.id, s.person.id]);
    const request = await startRequest(url, await registerClient(url, 'Forged'), pkce().challenge);
    for (const csrf of missingOrWrong(s.csrf)) {
      const res = await withSession(url, 'POST', `/v1/oauth/requests/${request}`, { cookie: s.cookie, csrf }, { approve: true });
      expect(res.status).toBe(403);
      const headers: Record<string, string> = { cookie: `orgmem_session=${s.cookie}` };
      if (csrf) headers['x-orgmem-csrf'] = csrf;
      expect((await call(url, 'POST', '/trpc/oauth.decide', { headers, body: { request, approve: true } })).status).toBe(403);
    }
    expect((await withSession(url, 'GET', `/v1/oauth/requests/${request}`, s)).status).toBe(200);
    expect((await server.app.platform.query("select 1 from api_keys where tenant_id = $1 and label = 'Forged (OAuth)'", [t.id])).length).toBe(0);
  });

  it('leaves public routes and calls with their own key alone', async () => {
    const s = await signedIn(`public@${domain}`);
    expect((await withSession(url, 'GET', '/v1/status', { cookie: s.cookie })).status).not.toBe(403);
    // A key in the Authorization header is the call's credential; the cookie is not read.
    const keyed = await call(url, 'GET', '/v1/memory/identity/config', { key: t.key, headers: { cookie: `orgmem_session=${s.cookie}` } });
    expect(keyed.status).toBe(200);
  });
});

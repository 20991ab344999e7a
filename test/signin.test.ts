import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/core/ids.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { closedPort } from './support/closed-port.ts';
import { mcpPost, pkce, registerClient, startRequest, tokenRequest, REDIRECT } from './support/oauth-client.ts';
import { startProvider, type TestProvider } from './support/oidc-provider.ts';
import { startServer, type TestServer } from './support/server.ts';
import { browse, CookieJar, withSession } from './support/signin.ts';

/*
 * Sign-in with OpenID Connect (docs/sign-in.md) against a real provider (oidc-provider) on
 * 127.0.0.1, the browser's redirects followed by hand: the identity provider settings, the
 * provisioning rules, team sync, the session cookie with its CSRF token on REST, tRPC and the
 * OAuth consent of remote MCP, and signing out. The refusals are in signin-refusals.test.ts.
 */

let server: TestServer;
let url: string;
let idp: TestProvider;
let t: Tenant;
const domain = `acme-${randomBytes(3).toString('hex')}.example`;

/** Signs `who` in through the provider; answers the session cookie and where the browser landed. */
async function signIn(start: string): Promise<{ cookie: string | undefined; landed: string; res: Response }> {
  const jar = new CookieJar();
  const { res, visited } = await browse(`${url}${start}`, jar, (u) => u.origin === url && !u.pathname.startsWith('/v1/auth/'));
  return { cookie: jar.get(url, 'orgmem_session'), landed: visited.at(-1)!, res };
}

async function configure(tenant: Tenant, extra: Record<string, unknown> = {}) {
  const res = await tenant.api('PUT', '/v1/memory/identity/config', {
    issuer: idp.issuer,
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    allowed_domains: [domain],
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function session(cookie: string) {
  const res = await withSession(url, 'GET', '/v1/auth/session', { cookie });
  expect(res.status).toBe(200);
  return res.body as { person: { id: string; email: string; role: string }; tenant: { id: string }; csrf: string };
}

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  idp = await startProvider(`${url}/v1/auth/oidc/callback`);
  t = await newTenant(url, server.adminKey);
});

afterAll(async () => {
  await idp?.close();
  await server?.close();
});

describe('the identity provider settings', () => {
  it('are none at first, saved once discovery works, never show the secret, and are removed', async () => {
    const other = await newTenant(url, server.adminKey);
    expect((await other.api('GET', '/v1/memory/identity/config')).body).toMatchObject({ configured: false, issuer: null, client_secret_set: false });

    const port = await closedPort();
    const bad = await other.api('PUT', '/v1/memory/identity/config', { issuer: `http://127.0.0.1:${port}`, client_id: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^The issuer's discovery document \(http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration\) could not be used: /);

    const notUrl = await other.api('PUT', '/v1/memory/identity/config', { issuer: 'ftp://idp', client_id: 'x' });
    expect(notUrl.status).toBe(422);

    const saved = await configure(other, { allowed_domains: ['Example.COM'], allowed_groups: ['eng'], default_role: 'viewer' });
    expect(saved).toMatchObject({ configured: true, issuer: idp.issuer, client_id: idp.clientId, client_secret_set: true, allowed_domains: ['example.com'] });
    expect(JSON.stringify(saved)).not.toContain(idp.clientSecret);
    const got = await other.api('GET', '/v1/memory/identity/config');
    expect(got.body).toMatchObject({ configured: true, client_secret_set: true, allowed_groups: ['eng'], groups_claim: 'groups', default_role: 'viewer' });
    expect(JSON.stringify(got.body)).not.toContain(idp.clientSecret);
    const [row] = await server.app.platform.query<{ client_secret_sealed: string }>(
      'select client_secret_sealed from identity_providers where tenant_id = $1',
      [other.id],
    );
    expect(row!.client_secret_sealed).not.toContain(idp.clientSecret);

    // Left out, the stored secret stays; null clears it.
    expect((await other.api('PUT', '/v1/memory/identity/config', { issuer: idp.issuer, client_id: idp.clientId })).body.client_secret_set).toBe(true);
    expect(
      (await other.api('PUT', '/v1/memory/identity/config', { issuer: idp.issuer, client_id: idp.clientId, client_secret: null })).body.client_secret_set,
    ).toBe(false);

    const audit = await server.app.platform.query<{ action: string; detail: Record<string, unknown> }>(
      "select action, detail from audit_log where tenant_id = $1 and action like 'identity.%' order by at",
      [other.id],
    );
    expect(audit.map((a) => a.action)).toEqual(['identity.putConfig', 'identity.putConfig', 'identity.putConfig']);
    expect(JSON.stringify(audit)).not.toContain(idp.clientSecret);

    expect((await other.api('DELETE', '/v1/memory/identity/config')).status).toBe(204);
    expect((await other.api('DELETE', '/v1/memory/identity/config')).status).toBe(404);
    expect((await other.api('GET', '/v1/memory/identity/config')).body.configured).toBe(false);
  });
});

describe('signing in', () => {
  beforeAll(() => configure(t));

  it('makes a member of an allowed domain, opens a session in an HTTP-only cookie and goes back to return_to', async () => {
    const email = `ana@${domain}`;
    idp.signInAs({ sub: 'ana-sub', email, name: 'Ana Lima' });
    const { cookie, landed, res } = await signIn(`/v1/auth/oidc/start?email=${encodeURIComponent(email)}&return_to=${encodeURIComponent('/search?q=milk')}`);
    expect(landed).toBe(`${url}/search?q=milk`);
    expect(cookie).toMatch(/^mvs_/);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/);

    const s = await session(cookie!);
    expect(s.person).toMatchObject({ email, role: 'member' });
    expect(s.tenant.id).toBe(t.id);
    const [person] = await server.app.platform.query<{ subject: string; state: string; name: string }>(
      'select subject, state, name from people where tenant_id = $1 and id = $2',
      [t.id, s.person.id],
    );
    expect(person).toMatchObject({ subject: 'ana-sub', state: 'active', name: 'Ana Lima' });

    // The cookie with its CSRF token is the person's credential on REST and tRPC.
    const created = await withSession(
      url,
      'POST',
      '/v1/memory/collections/notes/memories',
      { cookie: cookie!, csrf: s.csrf },
      { text: 'Ana prefers oat milk' },
    );
    expect(created.status).toBe(201);
    expect(created.body.created_by).toEqual({ id: s.person.id, label: 'Ana Lima' });
    const listed = await call(url, 'GET', '/trpc/collections.list', { headers: { cookie: `orgmem_session=${cookie}`, 'x-orgmem-csrf': s.csrf } });
    expect(listed.status).toBe(200);
    // A member is no admin: the tenant's settings are not theirs.
    expect((await withSession(url, 'GET', '/v1/memory/identity/config', { cookie: cookie!, csrf: s.csrf })).status).toBe(403);

    const audit = await server.app.platform.query<{ actor_id: string; detail: { how: string } }>(
      "select actor_id, detail from audit_log where tenant_id = $1 and action = 'people.signIn'",
      [t.id],
    );
    expect(audit).toEqual([expect.objectContaining({ actor_id: s.person.id, detail: expect.objectContaining({ how: 'created' }) })]);

    // The same subject signs in again as the same person, by the organization id this time.
    const again = await signIn(`/v1/auth/oidc/start?tenant=${t.id}`);
    expect(again.landed).toBe(`${url}/collections`);
    expect((await session(again.cookie!)).person.id).toBe(s.person.id);
  });

  it('activates an invited person (any domain), who keeps the role invited with', async () => {
    const id = newId();
    await server.app.platform.query("insert into people (tenant_id, id, email, role, state) values ($1, $2, 'Bo@Partner.example', 'admin', 'invited')", [
      t.id,
      id,
    ]);
    idp.signInAs({ sub: 'bo-sub', email: 'bo@partner.example' });
    const { cookie } = await signIn('/v1/auth/oidc/start?email=bo%40partner.example');
    const s = await session(cookie!);
    expect(s.person).toMatchObject({ id, role: 'admin' });
    // An admin person's session manages the tenant.
    expect((await withSession(url, 'GET', '/v1/memory/identity/config', { cookie: cookie!, csrf: s.csrf })).status).toBe(200);
    const [row] = await server.app.platform.query<{ state: string; subject: string }>('select state, subject from people where tenant_id = $1 and id = $2', [
      t.id,
      id,
    ]);
    expect(row).toEqual({ state: 'active', subject: 'bo-sub' });
  });

  it("keeps the teams that follow a group in sync with the claim, leaving orgmem's memberships alone", async () => {
    const q = (sql: string, params: unknown[]) => server.app.platform.query(sql, params);
    const [eng, ops, book] = [newId(), newId(), newId()];
    await q(
      "insert into teams (tenant_id, id, name, provider_group) values ($1, $2, 'Engineering', 'eng'), ($1, $3, 'Ops', 'ops'), ($1, $4, 'Book club', null)",
      [t.id, eng, ops, book],
    );
    const email = `cy@${domain}`;
    idp.signInAs({ sub: 'cy-sub', email, groups: ['eng', 'unknown'] });
    const first = await session((await signIn('/v1/auth/oidc/start?email=' + encodeURIComponent(email))).cookie!);
    await q("insert into team_members (tenant_id, team_id, person_id, source) values ($1, $2, $3, 'orgmem'), ($1, $4, $3, 'orgmem')", [
      t.id,
      book,
      first.person.id,
      ops,
    ]);
    const teams = async () =>
      (
        await server.app.platform.query<{ team_id: string; source: string }>(
          'select team_id, source from team_members where tenant_id = $1 and person_id = $2 order by team_id',
          [t.id, first.person.id],
        )
      ).map((m) => `${m.team_id === eng ? 'eng' : m.team_id === ops ? 'ops' : 'book'}:${m.source}`);
    expect((await teams()).sort()).toEqual(['book:orgmem', 'eng:provider', 'ops:orgmem']);

    // Out of eng, into ops (already a member there by hand: that membership stays as it was).
    idp.signInAs({ sub: 'cy-sub', email, groups: ['ops'] });
    await signIn('/v1/auth/oidc/start?email=' + encodeURIComponent(email));
    expect((await teams()).sort()).toEqual(['book:orgmem', 'ops:orgmem']);
    // Out of every group: orgmem's memberships stay.
    idp.signInAs({ sub: 'cy-sub', email, groups: [] });
    await signIn('/v1/auth/oidc/start?email=' + encodeURIComponent(email));
    expect((await teams()).sort()).toEqual(['book:orgmem', 'ops:orgmem']);
    // The session knows its teams: authentication reads them.
    idp.signInAs({ sub: 'cy-sub', email, groups: ['eng'] });
    await signIn('/v1/auth/oidc/start?email=' + encodeURIComponent(email));
    expect((await teams()).sort()).toEqual(['book:orgmem', 'eng:provider', 'ops:orgmem']);
  });

  it('signs out with the CSRF token: the session ends and the cookie is cleared', async () => {
    idp.signInAs({ sub: 'di-sub', email: `di@${domain}` });
    const { cookie } = await signIn(`/v1/auth/oidc/start?email=di%40${domain}`);
    const s = await session(cookie!);
    const out = await fetch(`${url}/v1/auth/signout`, { method: 'POST', headers: { cookie: `orgmem_session=${cookie}`, 'x-orgmem-csrf': s.csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^orgmem_session=; HttpOnly; SameSite=Lax; Path=\/; Max-Age=0/);
    expect((await withSession(url, 'GET', '/v1/auth/session', { cookie: cookie! })).status).toBe(204);
    const after = await withSession(url, 'GET', '/v1/memory/collections', { cookie: cookie!, csrf: s.csrf });
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('This session has ended: sign in again');
    expect((await withSession(url, 'POST', '/v1/auth/signout', { cookie: cookie!, csrf: s.csrf })).status).toBe(401);
  });
});

describe('remote MCP approved by a signed-in person', () => {
  it('makes a key that acts for the person who approved it', async () => {
    const id = newId();
    const email = `owner@${domain}`;
    await server.app.platform.query("insert into people (tenant_id, id, email, role, state) values ($1, $2, $3, 'owner', 'invited')", [t.id, id, email]);
    idp.signInAs({ sub: 'owner-sub', email, name: 'Olga Owner' });
    const { cookie } = await signIn(`/v1/auth/oidc/start?email=${encodeURIComponent(email)}`);
    const s = await session(cookie!);

    const clientId = await registerClient(url, 'Claude');
    const { verifier, challenge } = pkce();
    const request = await startRequest(url, clientId, challenge);
    const consent = await withSession(url, 'GET', `/v1/oauth/requests/${request}`, { cookie: cookie!, csrf: s.csrf });
    expect(consent.status).toBe(200);
    const decided = await withSession(url, 'POST', `/v1/oauth/requests/${request}`, { cookie: cookie!, csrf: s.csrf }, { approve: true, read_write: true });
    expect(decided.status).toBe(200);
    const code = new URL(decided.body.redirect_to).searchParams.get('code')!;
    const tokens = await tokenRequest(url, { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
    expect(tokens.status).toBe(200);

    const [key] = await server.app.platform.query<{ person_id: string; label: string }>(
      "select person_id, label from api_keys where tenant_id = $1 and label = 'Claude (OAuth)'",
      [t.id],
    );
    expect(key!.person_id).toBe(id);
    const listed = await mcpPost(url, tokens.body.access_token);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    // Suspending the person stops the client that acts for them.
    await server.app.platform.query("update people set state = 'suspended' where tenant_id = $1 and id = $2", [t.id, id]);
    const refused = await mcpPost(url, tokens.body.access_token);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('The person this API key acts for (Olga Owner) is suspended');
  });
});

describe('tenant isolation', () => {
  it("a person of A never signs in to B, and A's session sees only A's data", async () => {
    const b = await newTenant(url, server.adminKey);
    await configure(b, { allowed_domains: [`b-${domain}`] });
    await b.api('POST', '/v1/memory/collections/b-secrets/memories', { text: 'B only' });

    const email = `eve@${domain}`;
    idp.signInAs({ sub: 'eve-sub', email });
    const start = await call(url, 'GET', `/v1/auth/oidc/start?tenant=${b.id}&email=${encodeURIComponent(email)}`);
    expect(start.status).toBe(403);
    expect(start.body.detail).toBe(`${email} may not sign in to this organization`);

    // Started for B without the e-mail, the provider's answer for an A address is refused by B's rules.
    const jar = new CookieJar();
    const { res } = await browse(`${url}/v1/auth/oidc/start?tenant=${b.id}`, jar, (u) => u.origin === url && !u.pathname.startsWith('/v1/auth/'));
    expect(new URL(res.headers.get('location')!, url).searchParams.get('signin_error')).toBe(
      `${email} is not a member of this organization: its domain and groups are not allowed, and it was not invited`,
    );
    expect(jar.get(url, 'orgmem_session')).toBeUndefined();

    const { cookie } = await signIn(`/v1/auth/oidc/start?email=${encodeURIComponent(email)}`);
    const s = await session(cookie!);
    expect(s.tenant.id).toBe(t.id);
    const listed = await withSession(url, 'GET', '/v1/memory/collections', { cookie: cookie!, csrf: s.csrf });
    expect(listed.body.map((c: { name: string }) => c.name)).not.toContain('b-secrets');
    expect((await withSession(url, 'GET', '/v1/memory/collections/b-secrets/memories', { cookie: cookie!, csrf: s.csrf })).status).toBe(404);
  });

  it('finds the tenant by e-mail, refusing an ambiguous domain and an unknown one', async () => {
    const shared = `shared-${domain}`;
    for (const x of [await newTenant(url, server.adminKey), await newTenant(url, server.adminKey)]) await configure(x, { allowed_domains: [shared] });
    const ambiguous = await call(url, 'GET', `/v1/auth/oidc/start?email=x%40${shared}`);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.detail).toBe(`Several organizations sign in ${shared} addresses: sign in with your organization id`);
    const none = await call(url, 'GET', '/v1/auth/oidc/start?email=x%40nowhere.example');
    expect(none.status).toBe(404);
    expect(none.body.detail).toBe('No organization signs in nowhere.example addresses');
  });
});

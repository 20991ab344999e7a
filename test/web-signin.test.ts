import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/core/ids.ts';
import { launchBrowser, openPage, screenshot } from './support/browser.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { authorizeParams, mcpPost, pkce, REDIRECT, registerClient, tokenRequest } from './support/oauth-client.ts';
import { startProvider, type TestProvider } from './support/oidc-provider.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * Signing in through the organization's provider in Chromium (docs/sign-in.md): the dashboard's
 * "Sign in with your organization", every call it then makes authenticated by the session cookie
 * and its CSRF token, the identity provider settings, signing out, a refusal shown on the sign-in
 * page, and the claude.ai-style consent of remote MCP approved by the signed-in person.
 */

let server: TestServer;
let url: string;
let browser: Browser | undefined;
let idp: TestProvider;
let t: Tenant;
const domain = `web-${randomBytes(3).toString('hex')}.example`;

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  idp = await startProvider(`${url}/v1/auth/oidc/callback`);
  t = await newTenant(url, server.adminKey);
  const res = await t.api('PUT', '/v1/memory/identity/config', {
    issuer: idp.issuer,
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    allowed_domains: [domain],
  });
  expect(res.status).toBe(200);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await server?.close();
});

/** An admin person, invited, whom the provider will sign in. */
async function invitedAdmin(name: string): Promise<{ id: string; email: string }> {
  const id = newId();
  const email = `${name.toLowerCase()}@${domain}`;
  await server.app.platform.query("insert into people (tenant_id, id, email, name, role, state) values ($1, $2, $3, $4, 'admin', 'invited')", [
    t.id,
    id,
    email,
    name,
  ]);
  idp.signInAs({ sub: `${name}-sub`, email, name });
  return { id, email };
}

describe('the dashboard', () => {
  it('signs a person in through the organization, works with the cookie, and signs out', async () => {
    const { email } = await invitedAdmin('Ana');
    const page = await openPage(browser!);
    await page.goto(`${url}/`);
    await page.getByLabel('Work e-mail or organization id').fill(email);
    await screenshot(page, 'signin-organization');
    await page.getByRole('button', { name: 'Continue with your organization' }).click();
    await page.waitForURL(`${url}/collections`);
    await page.getByText('Ana').first().waitFor();
    const cookie = (await page.context().cookies(url)).find((c) => c.name === 'orgmem_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    // The tab holds no key: the cookie and its CSRF token carry every call.
    expect(await page.evaluate(() => sessionStorage.getItem('orgmem.apiKey'))).toBeNull();

    // An admin person changes the identity provider's settings (a tRPC mutation with the CSRF token).
    await page.goto(`${url}/settings`);
    await page.getByRole('heading', { name: 'Identity provider' }).waitFor();
    await expect.poll(() => page.getByLabel('Issuer URL').inputValue()).toBe(idp.issuer);
    await page.getByLabel('Allowed groups (one a line)').fill('engineering');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await expect.poll(async () => (await t.api('GET', '/v1/memory/identity/config')).body.allowed_groups).toEqual(['engineering']);
    expect((await t.api('GET', '/v1/memory/identity/config')).body.client_secret_set).toBe(true);
    await screenshot(page, 'settings-identity');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Continue with your organization' }).waitFor();
    expect((await call(url, 'GET', '/v1/auth/session', { headers: { cookie: `orgmem_session=${cookie.value}` } })).status).toBe(204);
    await page.context().close();
  });

  it('shows why a sign-in was refused', async () => {
    idp.signInAs({ sub: 'stranger', email: 'stranger@elsewhere.example' });
    const page = await openPage(browser!);
    await page.goto(`${url}/`);
    await page.getByLabel('Work e-mail or organization id').fill(t.id);
    await page.getByRole('button', { name: 'Continue with your organization' }).click();
    await page
      .getByText(
        'Sign-in refused: stranger@elsewhere.example is not a member of this organization: its domain and groups are not allowed, and it was not invited',
      )
      .waitFor();
    expect((await page.context().cookies(url)).some((c) => c.name === 'orgmem_session')).toBe(false);
    await page.context().close();
  });
});

describe('remote MCP consent by a signed-in person', () => {
  it('signs in on the consent page, shows the person, and the approved client acts for them', async () => {
    const { id, email } = await invitedAdmin('Olga');
    const clientId = await registerClient(url, 'Claude');
    const { verifier, challenge } = pkce();
    const page = await openPage(browser!);
    await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, body: 'back at the client' }));
    await page.goto(`${url}/oauth/authorize?${new URLSearchParams(authorizeParams(url, clientId, challenge))}`);
    await page.waitForURL(/\/oauth\/consent\?request=/);
    await page.getByLabel('Work e-mail or organization id').fill(email);
    await page.getByRole('button', { name: 'Continue with your organization' }).click();
    await page.getByRole('heading', { name: 'Claude wants to use your memories' }).waitFor();
    await page.getByText(`Olga (${email})`).waitFor();
    await page.getByLabel('Read and write').check();
    await screenshot(page, 'oauth-consent-person');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${REDIRECT}**`);
    const code = new URL(page.url()).searchParams.get('code')!;
    const tokens = await tokenRequest(url, { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
    expect(tokens.status).toBe(200);
    expect((await mcpPost(url, tokens.body.access_token)).status).toBe(200);
    const [key] = await server.app.platform.query<{ person_id: string }>("select person_id from api_keys where tenant_id = $1 and label = 'Claude (OAuth)'", [
      t.id,
    ]);
    expect(key!.person_id).toBe(id);
    await page.context().close();
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { refreshAuthorization, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot } from './support/browser.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { mcpPost, pkce, REDIRECT, registerClient, startRequest, tokenRequest, TestOAuthClient } from './support/oauth-client.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * Remote MCP with OAuth end to end (docs/mcp.md): the official SDK client's OAuth flow with the
 * dashboard's consent page driven in Chromium. The refusals and the rest of the flow without a
 * browser are in mcp-oauth.test.ts.
 */

let server: TestServer;
let url: string;
let browser: Browser | undefined;
let t: Tenant;

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  t = await newTenant(url, server.adminKey);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the SDK client, with the consent page in Chromium', () => {
  it('registers, is approved, lists and calls tools, refreshes, and is revoked', async () => {
    const provider = new TestOAuthClient('Test agent');
    const mcpUrl = new URL(`${url}/v1/mcp`);
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toEqual(expect.any(String));
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(`${url}/v1/mcp`);

    // The person: the consent page, signed in with the tenant's key, approving read and write.
    const page = await openPage(browser!);
    await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, body: 'back at the client' }));
    await page.goto(provider.authorizationUrl!.href);
    await page.waitForURL(/\/oauth\/consent\?request=/);
    await page.getByLabel('API key').fill(t.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Test agent wants to use your memories' }).waitFor();
    expect(await page.getByText('127.0.0.1:9').count()).toBe(1);
    await page.getByLabel('Read and write').check();
    await screenshot(page, 'oauth-consent');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${REDIRECT}**`);
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('state-of-the-test');
    expect(back.searchParams.get('iss')).toBe(url);

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await transport.finishAuth(back.searchParams.get('code')!);
    expect(provider.saved?.scope).toBe('memory:read memory:write');
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('search');
    const stored = await client.callTool({ name: 'store_memory', arguments: { collection: 'oauth', text: 'stored by an OAuth client' } });
    expect(stored.isError).toBeFalsy();
    await client.close();

    // The client is an agent of the tenant: listed with the keys, its writes carry its name.
    const keys = await t.api('GET', '/v1/memory/keys');
    const agent = keys.body.find((k: { label: string }) => k.label === 'Test agent (OAuth)');
    expect(agent).toMatchObject({ role: 'agent', read_only: false, collections: null, revoked_at: null });
    const listed = await t.api('GET', '/v1/memory/collections/oauth/memories');
    expect(listed.body[0].created_by.label).toBe('Test agent (OAuth)');
    // Its token is for the MCP endpoint only: REST does not take it.
    expect((await call(url, 'GET', '/v1/memory/collections', { key: provider.saved!.access_token })).status).toBe(401);

    // Refresh rotates: the new pair works, the old refresh token is used up, and using it again
    // revokes the whole family, the new tokens included.
    const metadata = (await call(url, 'GET', '/.well-known/oauth-authorization-server')).body;
    const clientInformation = provider.info!;
    const old = provider.saved!;
    const renewed = await refreshAuthorization(url, { metadata, clientInformation, refreshToken: old.refresh_token!, resource: mcpUrl });
    expect(renewed.refresh_token).not.toBe(old.refresh_token);
    expect((await mcpPost(url, renewed.access_token)).status).toBe(200);
    const reused = await tokenRequest(url, { grant_type: 'refresh_token', client_id: clientInformation.client_id, refresh_token: old.refresh_token! });
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await mcpPost(url, renewed.access_token)).status).toBe(401);
    const afterReuse = await tokenRequest(url, { grant_type: 'refresh_token', client_id: clientInformation.client_id, refresh_token: renewed.refresh_token! });
    expect(afterReuse.body.error).toBe('invalid_grant');
  });
});

describe('the consent page', () => {
  for (const [width, answer] of [
    [1280, 'Deny'],
    [390, 'Approve'],
  ] as const) {
    it(`at ${width} pixels: styled as the app, Approve the primary action and Deny the other, the account and key deciding shown; ${answer} answers the client`, async () => {
      const clientId = await registerClient(url, `Planner ${width}`);
      const request = await startRequest(url, clientId, pkce().challenge);
      const page = await openPage(browser!, width);
      await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, body: 'back at the client' }));
      await page.goto(`${url}/oauth/consent?request=${request}`);
      await page.getByRole('heading', { name: 'Authorize an application', level: 1 }).waitFor();
      await page.getByLabel('API key').fill(t.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: `Planner ${width} wants to use your memories` }).waitFor();

      // Which account and key would approve: the tenant's name and email, the key's label.
      const me = (await t.api('GET', '/v1/memory/admin/me')).body;
      const account = page.getByLabel('Signed in as');
      expect(await account.textContent()).toBe(`Signed in as ${me.name} (${me.email}) · ${me.key.label}Use another key`);

      // Approve is the app's primary button, Deny a plain one beside it; the choices are the app's boxes, not the browser's.
      const approve = page.getByRole('button', { name: 'Approve' });
      const deny = page.getByRole('button', { name: 'Deny' });
      const look = (el: Element) => {
        const s = getComputedStyle(el);
        return { className: el.className, background: s.backgroundColor, border: `${s.borderTopStyle} ${s.borderTopLeftRadius}` };
      };
      expect(await approve.evaluate(look)).toEqual({ className: 'primary', background: 'rgb(36, 86, 201)', border: 'solid 6px' });
      expect(await deny.evaluate(look)).toEqual({ className: '', background: 'rgb(255, 255, 255)', border: 'solid 6px' });
      for (const legend of ['Access', 'Collections']) {
        const fieldset = page.getByRole('group', { name: legend });
        expect(await fieldset.evaluate((el) => `${getComputedStyle(el).borderTopStyle} ${getComputedStyle(el).borderTopLeftRadius}`), legend).toBe('solid 6px');
      }
      // Everything in sight across, the answer buttons side by side, no sideways scroll.
      const [a, d] = [await approve.boundingBox(), await deny.boundingBox()];
      expect(a!.x + a!.width).toBeLessThanOrEqual(d!.x);
      expect(Math.abs(a!.y - d!.y)).toBeLessThan(1);
      const card = await page.getByRole('region', { name: `Planner ${width} wants to use your memories` }).boundingBox();
      expect(card!.x).toBeGreaterThanOrEqual(0);
      expect(card!.x + card!.width).toBeLessThanOrEqual(width);
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
      await screenshot(page, `oauth-consent-${width}`);

      await page.getByRole('button', { name: answer }).click();
      await page.waitForURL(`${REDIRECT}**`);
      const back = new URL(page.url()).searchParams;
      if (answer === 'Deny') expect(back.get('error')).toBe('access_denied');
      else expect(back.get('code')).toEqual(expect.any(String));
      await page.context().close();
    });
  }

  it('"Use another key" signs out on the page itself; an agent key sees whose it is and that an admin key decides', async () => {
    const agent = await t.newKey('helper-bot');
    const request = await startRequest(url, await registerClient(url, 'Switcher'), pkce().challenge);
    const page = await openPage(browser!, 390);
    await page.goto(`${url}/oauth/consent?request=${request}`);
    await page.getByLabel('API key').fill(t.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Use another key' }).click();
    await page.getByLabel('API key').waitFor();
    // The sign-in form as on the sign-in page: the label, the field and the primary button stacked.
    const [label, field, signIn] = await Promise.all(
      [page.getByText('API key', { exact: true }), page.getByLabel('API key'), page.getByRole('button', { name: 'Sign in' })].map((l) => l.boundingBox()),
    );
    expect(label!.y + label!.height).toBeLessThanOrEqual(field!.y);
    expect(field!.y + field!.height).toBeLessThanOrEqual(signIn!.y);
    expect(await page.getByRole('button', { name: 'Sign in' }).getAttribute('class')).toBe('primary');
    await screenshot(page, 'oauth-consent-sign-in-390');
    await page.getByLabel('API key').fill(agent.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Switcher wants to use your memories' }).waitFor();
    expect(page.url()).toBe(`${url}/oauth/consent?request=${request}`);
    expect(await page.getByLabel('Signed in as').textContent()).toContain('· helper-botagent key');
    await page.getByText('use an admin key of this account to decide').waitFor();
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await screenshot(page, 'oauth-consent-agent-390');
    await page.context().close();
  });
});

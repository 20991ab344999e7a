import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEB_DIR } from '../host/web-routes.ts';
import { procedures } from '../procedures/index.ts';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * The dashboard's frame in real Chromium against a real server: an unknown page keeps the
 * navigation, the favicon is served (also at /favicon.ico), the navigation is one row on a phone,
 * and the build holds the typed API client but none of the server's code.
 */
let server: TestServer;
let browser: Browser;
let t: Tenant;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
  browser = await launchBrowser();
  t = await newTenant(server.url, server.adminKey, { admin: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const mainNav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

describe('web: the frame', () => {
  it('an unknown page shows the navigation and a link home; signed out it is the sign-in page', async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/notes/nothing-here`);
    await page.getByRole('heading', { name: 'No such page', level: 1 }).waitFor();
    expect(await page.getByText('/collections/notes/nothing-here').count()).toBe(1);
    // The whole signed-in frame: the navigation, and who is signed in.
    for (const name of ['Collections', 'Search', 'Keys & agents', 'Operator']) expect(await mainNav(page).getByRole('link', { name }).count(), name).toBe(1);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    await screenshot(page, 'not-found-1280');
    await page.getByRole('link', { name: 'Back to your collections' }).click();
    await page.waitForURL(`${server.url}/collections`);
    await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();

    const signedOut = await openPage(browser, 1280);
    await signedOut.goto(`${server.url}/nothing-here`);
    await signedOut.waitForURL(`${server.url}/`);
    await signedOut.getByLabel('API key').waitFor();
    await page.context().close();
    await signedOut.context().close();
  });

  it('serves the favicon that index.html links, also at /favicon.ico, and a page loads with no error answer', async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    expect(html).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml" />');
    const svg = await fetch(`${server.url}/favicon.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    const icon = await svg.text();
    expect(icon).toMatch(/^<svg /);
    const ico = await fetch(`${server.url}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get('content-type')).toBe('image/svg+xml');
    expect(await ico.text()).toBe(icon);

    const page = await openPage(browser, 1280);
    const failed: string[] = [];
    page.on('response', (r) => r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`));
    await signIn(page, server.url, t.key);
    await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
    // The icon the page links, as the browser reads it.
    expect(await page.evaluate(async () => (await fetch((document.querySelector('link[rel=icon]') as HTMLLinkElement).href)).status)).toBe(200);
    expect(failed).toEqual([]);
    await page.context().close();
  });

  it('fits the navigation in one row at 390 pixels, the current page in sight', async () => {
    const page = await openPage(browser, 390);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/operator`);
    await page.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();
    const nav = await mainNav(page).evaluate((el) => {
      const links = [...el.querySelectorAll('a')].map((a) => a.getBoundingClientRect());
      return { height: el.getBoundingClientRect().height, rows: new Set(links.map((r) => Math.round(r.top))).size, linkHeight: links[0]!.height };
    });
    expect(nav.rows).toBe(1);
    expect(nav.height).toBeLessThan(nav.linkHeight * 1.5);
    // The page does not scroll sideways; the row does, and shows the current page's link.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const current = await mainNav(page).getByRole('link', { name: 'Operator' }).boundingBox();
    expect(current!.x).toBeGreaterThanOrEqual(0);
    expect(current!.x + current!.width).toBeLessThanOrEqual(390);
    await screenshot(page, 'navigation-390');
    // Every link can still be reached: the first one, scrolled back to, opens its page.
    await mainNav(page).getByRole('link', { name: 'Collections' }).click();
    await page.waitForURL(`${server.url}/collections`);
    await page.context().close();
  });
});

describe('web: the build', () => {
  it('holds the tRPC client and no code of the server', () => {
    const bundle = readdirSync(join(WEB_DIR, 'assets'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(WEB_DIR, 'assets', f), 'utf8'))
      .join('\n');
    // The client is there (so the search below reads the real bundle)...
    expect(bundle).toContain('TRPCClientError');
    expect(bundle).toContain('/trpc');
    // ...but not one procedure: their summaries are strings only the server holds.
    expect(procedures.length).toBeGreaterThan(90);
    expect(procedures.map((p) => p.summary).filter((s) => bundle.includes(s))).toEqual([]);
  });
});

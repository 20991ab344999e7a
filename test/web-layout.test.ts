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
 * navigation, the favicon is served (also at /favicon.ico), every link of the navigation is in
 * reach at 1280 and 390 pixels (on a phone under a Menu button),
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

  /** The links of the main navigation not wholly inside the window (or clipped by a scrolling navigation), and whether the page scrolls sideways. */
  const outOfSight = (page: Page) =>
    mainNav(page).evaluate((nav) => ({
      links: [...nav.querySelectorAll('a')]
        .filter((a) => {
          const r = a.getBoundingClientRect();
          return !(r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight);
        })
        .map((a) => a.textContent),
      navScrolls: nav.scrollWidth > nav.clientWidth,
      pageScrolls: document.scrollingElement!.scrollWidth > innerWidth,
    }));
  const LINK_NAMES = ['Collections', 'Search', 'Review', 'Files', 'Connections', 'Keys & agents', 'People', 'Settings', 'Usage', 'Operator', 'Status'];

  it('shows every link of the navigation at 1280 pixels, with no menu button', async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    // The menu is drawn once the signed-in account is read: its last link says it is there.
    await mainNav(page).getByRole('link', { name: 'Status' }).waitFor();
    expect(await mainNav(page).getByRole('link').allTextContents()).toEqual(LINK_NAMES);
    expect(await outOfSight(page)).toEqual({ links: [], navScrolls: false, pageScrolls: false });
    expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    await page.context().close();
  });

  it('folds the navigation under a Menu button at 390 pixels that opens every link in sight, with no sideways scroll', async () => {
    const page = await openPage(browser, 390);
    await signIn(page, server.url, t.key);
    await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await menu.isVisible()).toBe(true);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, 'navigation-390');

    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    expect(await mainNav(page).getByRole('link').allTextContents()).toEqual(LINK_NAMES);
    expect(await outOfSight(page)).toEqual({ links: [], navScrolls: false, pageScrolls: false });
    await screenshot(page, 'navigation-390-open');

    // A link opens its page and folds the list again.
    await mainNav(page).getByRole('link', { name: 'Operator' }).click();
    await page.waitForURL(`${server.url}/operator`);
    await page.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await mainNav(page).isVisible()).toBe(false);
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
    // The last link too, and the current page is marked in the list.
    await menu.click();
    expect(await mainNav(page).getByRole('link', { name: 'Operator' }).getAttribute('aria-current')).toBe('page');
    await mainNav(page).getByRole('link', { name: 'Status' }).click();
    await page.waitForURL(`${server.url}/status`);
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

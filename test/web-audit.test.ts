import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedures } from '../procedures/index.ts';
import { isRead } from '../src/pipeline/procedure.ts';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { col } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * The audit log as the dashboard leaves it and shows it, in real Chromium against a real server:
 * browsing every page (the operator's reports and the log itself included) and watching a job
 * adds no entry, only the writes made are there; a long detail wraps in its cell at 1280 and
 * 390 pixels, the table never wider than the page.
 */
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The tenant's own log over REST, oldest first, as `[action, target]`. */
const logged = async (t: Tenant) =>
  ((await t.api('GET', '/v1/memory/admin/audit?limit=1000')).body as Array<{ action: string; target: string; detail: Record<string, unknown> }>).reverse();

/** Every page of the navigation and of a collection, by its address and its heading. */
const PAGES: Array<[string, string]> = [
  ['/collections', 'Collections'],
  ['/collections/notes', 'notes'],
  ['/collections/notes/health', 'notes'],
  ['/collections/notes/hygiene', 'notes'],
  ['/collections/notes/grants', 'notes'],
  ['/search', 'Search'],
  ['/files', 'Files'],
  ['/connections', 'Connections'],
  ['/keys', 'Keys & agents'],
  ['/settings', 'Settings'],
  ['/usage', 'Usage'],
  ['/operator', 'Operator'],
  ['/status', 'Service status'],
];

async function visit(page: Page, path: string, heading: string) {
  await page.goto(`${server.url}${path}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  // Every read the page makes has been answered.
  await page.waitForLoadState('networkidle');
}

describe('web: the audit log', () => {
  it('holds the writes only, after the dashboard read every page, its reports and the log, and watched a job', { timeout: 120_000 }, async () => {
    const t = await newTenant(server.url, server.adminKey, { admin: true });
    expect((await t.api('POST', `${col('notes')}/memories`, { text: 'Ana prefers oat milk.' })).status).toBe(201);
    const page = await openPage(browser, 1280);
    // The procedures the dashboard asked (one a request: its tRPC link does not batch).
    const asked = new Set<string>();
    page.on('request', (r) => {
      const { pathname } = new URL(r.url());
      if (pathname.startsWith('/trpc/')) asked.add(pathname.slice('/trpc/'.length));
    });
    await signIn(page, server.url, t.key);
    for (const [path, heading] of PAGES) await visit(page, path, heading);
    // The page that writes: remember, then its job polled to the end.
    await visit(page, '/collections/notes/remember', 'notes');
    await page.getByLabel('Text to remember').fill('I live in Porto.');
    await page.getByRole('button', { name: 'Remember' }).click();
    await page.locator('[aria-current=step]', { hasText: 'done' }).waitFor();
    // And the log again, now that it holds the remember.
    await visit(page, '/usage', 'Usage');
    await page
      .getByRole('table', { name: 'Audit log' })
      .getByRole('row', { name: /graph\.remember/ })
      .waitFor();
    await page.context().close();

    // The reads were made: the operator's reports, the log itself, the job's progress...
    for (const name of ['admin.audit', 'admin.metrics', 'admin.connectors', 'admin.connectorsStatus', 'admin.stats', 'graph.extractJob', 'keys.list']) {
      expect(asked, name).toContain(name);
    }
    // ...and the log holds the two writes, nothing else.
    expect((await logged(t)).map((e) => [e.action, e.target])).toEqual([
      ['memories.create', 'collections/notes/memories'],
      ['graph.remember', 'collections/notes/remember'],
    ]);
    const reads = new Set(procedures.filter(isRead).map((p) => p.name));
    expect([...asked].filter((name) => !reads.has(name))).toEqual(['graph.remember']);
  });

  it('wraps a long detail in its cell at 1280 and 390 pixels, the whole text shown and the table within the page', { timeout: 90_000 }, async () => {
    const t = await newTenant(server.url, server.adminKey, { admin: true });
    const name = `quarterly_planning_notes_of_the_platform_team_${'x'.repeat(18)}`;
    // No space, no hyphen: nowhere a line may break but where the page lets any text break.
    const description = 'Decisions_and_open_questions_from_every_planning_meeting_'.repeat(10);
    expect(name).toHaveLength(64);
    expect((await t.api('POST', '/v1/memory/collections', { name, description })).status).toBe(201);
    const [entry] = await logged(t);
    // The detail as the service recorded it: the description cut at 200 characters.
    const detail = `name=${name} description=${description.slice(0, 200)}…`;
    expect(entry).toMatchObject({ action: 'collections.create', detail: { name, description: `${description.slice(0, 200)}…` } });

    for (const width of [1280, 390] as const) {
      const page = await openPage(browser, width);
      await signIn(page, server.url, t.key);
      await visit(page, '/usage', 'Usage');
      const table = page.getByRole('table', { name: 'Audit log' });
      const row = table.getByRole('row', { name: /collections\.create/ });
      await row.waitFor();
      expect(await row.getByRole('cell').last().textContent()).toBe(detail);
      const fit = await table.evaluate((el) => ({
        // The table is no wider than the box it sits in (which would scroll it sideways)...
        table: el.getBoundingClientRect().width <= el.parentElement!.clientWidth + 0.5,
        scrolls: el.parentElement!.scrollWidth > el.parentElement!.clientWidth,
        // ...no cell's text runs out of its cell...
        overflowing: [...el.querySelectorAll('td')].filter((td) => td.scrollWidth > td.clientWidth).map((td) => td.textContent),
        // ...and the page does not scroll sideways.
        page: document.scrollingElement!.scrollWidth <= innerWidth,
      }));
      expect(fit, `at ${width} px`).toEqual({ table: true, scrolls: false, overflowing: [], page: true });
      await table.scrollIntoViewIfNeeded();
      await screenshot(page, `audit-log-${width}`);
      await page.context().close();
    }
  });
});

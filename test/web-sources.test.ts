import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../host/app.ts';
import { recordCheck } from '../src/services/status/checks.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { startLinearFake } from './fakes/providers/linear.ts';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The dashboard's sources, status and operator pages in real Chromium against a real server:
 * connections to a fake Linear (create, sync, runs, a wrong token, delete; OAuth configured for Google, not for Notion),
 * files dropped into a collection and read by the worker, the public status page and its beacon,
 * and the operator's connector health for an admin tenant only. Outcomes are checked over REST.
 *
 * The worker starts only for the file drop (after the connection tests): its minute scheduler
 * would otherwise sync a new connection on its own and race the "Sync now" being tested.
 */
let linear: ProviderFake;
/** Where the server sends the browser for Google's consent: a page on 127.0.0.1 that answers nothing in particular. */
let consent: ProviderFake;
let server: TestServer;
let browser: Browser;
let t: Tenant;

beforeAll(async () => {
  linear = await startLinearFake();
  consent = await startLinearFake();
  server = await startServer(
    {
      ORGMEM_LINEAR_API_URL: linear.url,
      ORGMEM_GOOGLE_OAUTH_URL: consent.url,
      ORGMEM_GOOGLE_CLIENT_ID: 'google-client',
      ORGMEM_GOOGLE_CLIENT_SECRET: 'google-secret',
    },
    { worker: false },
  );
  browser = await launchBrowser();
  t = await newTenant(server.url, server.adminKey);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await linear?.close();
  await consent?.close();
});

const card = (page: Page, name: string) => page.getByRole('article', { name: new RegExp(`^${name}`) });
const badge = (c: Locator) => c.locator('[data-status]');
const listConnections = async () => (await t.api('GET', '/v1/memory/connections')).body as any[];

async function createLinear(page: Page, name: string, collection: string, token: string) {
  await page.getByLabel('Provider').selectOption('linear');
  await page.getByLabel('Collection', { exact: true }).fill(collection);
  await page.getByLabel('Name (optional)').fill(name);
  await page.getByLabel('Linear API key').fill(token);
  await page.getByRole('button', { name: 'Create connection' }).click();
  await card(page, name).waitFor();
}

describe('web: connections', () => {
  it('creates a Linear connection, syncs it, shows its runs; a wrong token shows the error; delete asks first', { timeout: 120_000 }, async () => {
    linear.put({ title: 'Checkout times out', body: 'Payments hang after 30 seconds on checkout.' });
    linear.put({ title: 'Dark mode contrast', body: 'Grey text on the dark theme is unreadable.' });
    linear.put({ title: 'Export to CSV', body: 'Finance wants the invoices as CSV.' });
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await page.getByText('No connections yet.').waitFor();
    // The providers named on the page are the service's list, not one written into the dashboard.
    await page.getByText(/reads one provider \(Slack, Notion, Google Drive, .*HubSpot/).waitFor();

    // Create: the card appears, active, and the service has it with the typed fields.
    await createLinear(page, 'Linear issues', 'issues', linear.connection().credentials.token as string);
    const good = card(page, 'Linear issues');
    expect(await badge(good).textContent()).toBe('active');
    const [created] = await listConnections();
    expect(created).toMatchObject({ provider: 'linear', name: 'Linear issues', collection: 'issues', status: 'active', cursor: null });

    // Sync now: the count, the status, and the run (three issues over two pages of the fake).
    await good.getByRole('button', { name: 'Sync now' }).click();
    await good
      .getByTestId('sync-result')
      .filter({ hasText: /^Synced 3 memories · status active/ })
      .waitFor();
    await good.getByRole('button', { name: 'Runs' }).click();
    const run = good.getByRole('row').filter({ hasText: 'success' });
    await run.waitFor();
    expect(await run.getByRole('cell').nth(2).textContent()).toBe('3');
    const afterSync = (await t.api('GET', `/v1/memory/connections/${created.id}`)).body;
    expect(afterSync).toMatchObject({ status: 'active', consecutive_failures: 0 });
    await good.locator('dd', { hasText: afterSync.cursor }).waitFor();
    const memories = (await t.api('GET', '/v1/memory/collections/issues/memories?limit=50')).body as any[];
    expect(memories.map((m) => m.text.split('\n')[0]).sort()).toEqual(['ENG-1 Checkout times out', 'ENG-2 Dark mode contrast', 'ENG-3 Export to CSV']);
    expect(memories.every((m) => m.source === 'linear' && m.metadata.connection_id === created.id)).toBe(true);
    const runs = (await t.api('GET', `/v1/memory/connections/${created.id}/runs`)).body;
    expect(runs).toEqual([expect.objectContaining({ status: 'success', synced_count: 3 })]);

    // A sync already running (its lease held): the 409's detail is shown.
    await server.app.db.query('update connections set sync_started_at = now() where id = $1', [created.id]);
    await good.getByRole('button', { name: 'Sync now' }).click();
    await good.getByRole('alert').filter({ hasText: 'A sync of this connection is running' }).waitFor();
    await server.app.db.query('update connections set sync_started_at = null where id = $1', [created.id]);

    // A wrong token: the sync answers status error, and the card shows the provider's words.
    await createLinear(page, 'Bad token', 'issues', 'lin_api_wrong');
    const bad = card(page, 'Bad token');
    await bad.getByRole('button', { name: 'Sync now' }).click();
    await bad
      .getByTestId('sync-result')
      .filter({ hasText: /status error/ })
      .waitFor();
    await until('the error badge', async () => ((await badge(bad).textContent()) === 'error' ? true : undefined));
    const badRest = (await listConnections()).find((c) => c.name === 'Bad token');
    expect(badRest).toMatchObject({ status: 'error', consecutive_failures: 1, last_error: expect.stringMatching(/authenticat/i) });
    expect(await bad.getByTestId('last-error').textContent()).toBe(`Last error: ${badRest.last_error}`);
    await screenshot(page, 'connections-1280');

    // Delete goes through the dialog: Cancel keeps it, confirming removes it.
    await bad.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this connection?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await t.api('GET', `/v1/memory/connections/${badRest.id}`)).status).toBe(200);
    await bad.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete connection' }).click();
    await bad.waitFor({ state: 'detached' });
    expect((await t.api('GET', `/v1/memory/connections/${badRest.id}`)).status).toBe(404);
    expect((await listConnections()).map((c) => c.name)).toEqual(['Linear issues']);

    // OAuth without the operator's app (Notion): the form says so and offers no consent button.
    await page.getByLabel('Provider').selectOption('notion');
    await page.getByTestId('oauth-unavailable').filter({ hasText: 'OAuth for Notion is not configured on this server' }).waitFor();
    expect(await page.getByRole('button', { name: /with OAuth/ }).count()).toBe(0);
    // With it (Google's, for Gmail): the button sends the browser to the consent page the service answered.
    await page.getByLabel('Provider').selectOption('gmail');
    expect(await page.getByTestId('oauth-unavailable').count()).toBe(0);
    await page.getByLabel('Collection', { exact: true }).fill('mail');
    await page.getByRole('button', { name: 'Connect Gmail with OAuth' }).click();
    await page.waitForURL(`${consent.url}/o/oauth2/v2/auth?**`);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({
      client_id: 'google-client',
      scope: 'https://www.googleapis.com/auth/gmail.readonly',
      redirect_uri: `${server.url}/v1/memory/connections/oauth/gmail/callback`,
      state: expect.any(String),
    });

    // Back from a consent page (when the operator points the callback at /connections).
    await page.goto(`${server.url}/connections?provider=notion&oauth_error=access_denied`);
    await page.getByRole('alert').filter({ hasText: 'Connecting notion with OAuth did not complete: access_denied' }).waitFor();
    await page.goto(`${server.url}/connections?provider=notion&connection=${created.id}`);
    await page
      .getByRole('status')
      .filter({ hasText: `the new connection (${created.id})` })
      .waitFor();
    await page.context().close();
  });
});

describe('web: files', () => {
  it('drops two text files into a new collection, shows the batch to completion, and the email drop address rotates', { timeout: 120_000 }, async () => {
    await startWorker(server.app);
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();

    const lighthouse = 'The lighthouse keeper logs the lamp hours every night.';
    const ferry = 'The ferry to the island leaves at 07:15 on weekdays.';
    await page.getByLabel('Collection', { exact: true }).fill('harbour');
    await page.getByLabel('Files', { exact: true }).setInputFiles([
      { name: 'lighthouse.txt', mimeType: 'text/plain', buffer: Buffer.from(lighthouse) },
      { name: 'ferry.txt', mimeType: 'text/plain', buffer: Buffer.from(ferry) },
    ]);
    await page.getByRole('button', { name: 'Drop 2 files' }).click();
    await page.getByText('Complete: 2 done · 0 failed · 0 pending of 2').waitFor();
    for (const [name, text] of [
      ['lighthouse.txt', lighthouse],
      ['ferry.txt', ferry],
    ] as const) {
      const row = page.locator(`tr[data-file="${name}"]`);
      expect(await row.getByRole('cell').nth(1).textContent()).toBe('stored');
      expect(await row.getByRole('cell').nth(2).textContent()).toBe('1');
      await row.getByText(text).waitFor();
    }
    expect(await page.locator('#batch-progress').evaluate((p: HTMLProgressElement) => [p.value, p.max])).toEqual([2, 2]);
    await screenshot(page, 'files-1280');

    const memories = (await t.api('GET', '/v1/memory/collections/harbour/memories?limit=50')).body as any[];
    expect(memories.map((m) => [m.metadata.file, m.text]).sort()).toEqual([
      ['ferry.txt', ferry],
      ['lighthouse.txt', lighthouse],
    ]);
    expect(memories.every((m) => m.source === 'drop' && m.category === 'document')).toBe(true);

    // The email drop address, and rotating it through the confirm dialog.
    const before = (await t.api('GET', '/v1/memory/email/address')).body.address as string;
    await page.getByTestId('drop-address').filter({ hasText: before }).waitFor();
    await page.getByRole('button', { name: 'Rotate address' }).click();
    await page.getByRole('dialog', { name: 'Rotate the drop address?' }).getByRole('button', { name: 'Rotate', exact: true }).click();
    const after = await until('a new address', async () => {
      const a = (await t.api('GET', '/v1/memory/email/address')).body.address as string;
      return a !== before ? a : undefined;
    });
    await page.getByTestId('drop-address').filter({ hasText: after }).waitFor();

    // At phone width nothing is wider than the screen (tables scroll inside their own box).
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // On a phone the navigation is under the Menu button.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connections' }).click();
    await card(page, 'Linear issues').getByRole('button', { name: 'Runs' }).click();
    await card(page, 'Linear issues').getByRole('row').filter({ hasText: 'success' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.context().close();
  });

  it('a read-only key sees no write controls on files and connections', async () => {
    const ro = await t.newKey('viewer', true);
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, ro.key);
    await page.goto(`${server.url}/files`);
    await page.getByText('This key is read-only: it cannot drop files.').waitFor();
    await page.getByTestId('drop-address').waitFor();
    expect(await page.getByLabel('Files', { exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Rotate address' }).count()).toBe(0);
    await page.goto(`${server.url}/connections`);
    const c = card(page, 'Linear issues');
    await c.getByRole('button', { name: 'Runs' }).waitFor();
    expect(await page.getByRole('button', { name: /Create connection|Sync now|Delete|OAuth/ }).count()).toBe(0);
    expect(await page.getByLabel('Provider').count()).toBe(0);
    await page.context().close();
  });
});

describe('web: status page', () => {
  it('renders signed out with the state, the 24 h uptime and the checks, and sends one beacon', async () => {
    await recordCheck(server.app);
    const report = (await t.api('GET', '/v1/status')).body;
    expect(report.uptime_24h).toEqual(expect.any(Number));
    const page = await openPage(browser, 1280);
    await page.goto(`${server.url}/status`);
    await page.getByTestId('status-state').filter({ hasText: 'All systems operational' }).waitFor();
    expect(await page.getByTestId('uptime').textContent()).toBe(`${report.uptime_24h}%`);
    await page.getByRole('img', { name: /recent checks passed/ }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    const views = await until('the beacon', async () => {
      const rows = await server.app.db.query<{ path: string }>('select path from pageviews');
      return rows.some((r) => r.path === '/status') ? rows : undefined;
    });
    expect(views.filter((r) => r.path === '/status')).toHaveLength(1);
    await screenshot(page, 'status-1280');

    const phone = await openPage(browser, 390);
    await phone.goto(`${server.url}/status`);
    await phone.getByTestId('status-state').filter({ hasText: 'All systems operational' }).waitFor();
    // Nothing wider than the phone's screen.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(phone, 'status-390');
    await until("the second load's beacon", async () => {
      const rows = await server.app.db.query<{ path: string }>(`select path from pageviews where path = '/status'`);
      return rows.length === 2 ? true : undefined;
    });
    await page.context().close();
    await phone.context().close();
  });
});

describe('web: operator', () => {
  it('is hidden from a tenant that is not admin and shows connector runs to an admin tenant', { timeout: 90_000 }, async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Files' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Operator' }).count()).toBe(0);
    await page.context().close();

    const admin = await newTenant(server.url, server.adminKey, { admin: true });
    const health = (await admin.api('GET', '/v1/memory/admin/connectors?hours=24')).body;
    const linearRuns = health.providers.find((p: { provider: string }) => p.provider === 'linear');
    expect(linearRuns.runs).toBeGreaterThanOrEqual(1);
    const op = await openPage(browser, 1280);
    await signIn(op, server.url, admin.key);
    // The page asks for the metrics (over tRPC) as it opens; what it then shows depends on that answer.
    const metricsAsked = op.waitForResponse((r) => new URL(r.url()).pathname === '/trpc/admin.metrics');
    await op.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operator' }).click();
    await op.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();
    const row = op.locator('tr[data-provider="linear"]');
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(String(linearRuns.runs));
    expect(await row.getByRole('cell').nth(2).textContent()).toBe(String(linearRuns.errors));
    const counts = (await admin.api('GET', '/v1/memory/admin/connectors/status')).body as Array<{ status: string; n: number }>;
    const active = counts.find((c) => c.status === 'active')?.n ?? 0;
    const activeCard = op.getByTestId('connection-counts').locator('.card').filter({ hasText: 'Connections active' });
    expect(await activeCard.locator('div').nth(1).textContent()).toBe(String(active));
    await op.getByLabel('Period').selectOption('1');
    await row.waitFor();

    // The metrics section shows when the operator route answers, and stays hidden while it answers 404.
    const metrics = await admin.api('GET', '/v1/memory/admin/metrics');
    expect((await metricsAsked).status()).toBe(metrics.status);
    await op.getByRole('heading', { name: 'Runs', level: 3, exact: true }).waitFor();
    if (metrics.status === 404) expect(await op.getByRole('heading', { name: 'Metrics' }).count()).toBe(0);
    else await op.getByRole('heading', { name: 'Metrics' }).waitFor();
    await screenshot(op, 'operator-1280');
    await op.context().close();
  });
});

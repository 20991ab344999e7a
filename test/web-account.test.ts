import { createHmac } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from './fakes/webhook-receiver.ts';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { closedPort } from './support/closed-port.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The dashboard's account pages in real Chromium against a real server: keys (shown once,
 * revoked, rotated), grants, settings (webhook, extraction, spend cap) and usage. Every change
 * made in the UI is checked again over REST.
 */
describe('dashboard: keys, grants, settings, usage', () => {
  let server: TestServer;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
    receiver = await startReceiver();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.close();
  });

  /** A fresh tenant signed in on a fresh page (each test its own, so they never depend on each other). */
  async function signedIn(opts: { admin?: boolean; width?: 1280 | 390 } = {}): Promise<{ t: Tenant; page: Page }> {
    const t = await newTenant(server.url, server.adminKey, { admin: opts.admin });
    const page = await openPage(browser, opts.width ?? 1280);
    await signIn(page, server.url, t.key);
    return { t, page };
  }
  const me = (key: string) => call(server.url, 'GET', '/v1/memory/admin/me', { key });
  /** The value shown for one labelled fact (a <dt>/<dd> pair). */
  const fact = (page: Page, label: string) => page.locator('dl > div', { has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) }).locator('dd');

  it('creates a key shown once, which works over REST, and revokes it through the confirm dialog', async () => {
    const { t, page } = await signedIn();
    await page.getByRole('link', { name: 'Keys & agents' }).click();
    await page.getByRole('heading', { name: 'Keys & agents', level: 1 }).waitFor();
    // The key the dashboard is signed in with is marked.
    const mine = (await me(t.key)).body.key;
    await page
      .getByRole('row', { name: new RegExp(`${mine.label}.*this dashboard`) })
      .first()
      .waitFor();

    await page.getByLabel('Label').fill('ci-bot');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('New API key');
    await shown.waitFor();
    const newKey = await shown.inputValue();
    expect(newKey).toMatch(/^mv_/);
    expect(await page.getByText('it will not be shown again').isVisible()).toBe(true);
    const check = await me(newKey);
    expect(check.status).toBe(200);
    expect(check.body.key).toMatchObject({ label: 'ci-bot', read_only: false });

    // Listed masked, and listed among the agents too.
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row', { name: /ci-bot/ });
    await row.waitFor();
    expect(await row.textContent()).not.toContain(newKey);
    await page
      .getByRole('table', { name: 'Agents' })
      .getByRole('row', { name: /ci-bot/ })
      .waitFor();
    await screenshot(page, 'keys-1280');

    // Shown once: a reload shows the list, never the key.
    await page.reload();
    await row.waitFor();
    expect(await page.getByLabel('New API key').count()).toBe(0);
    expect(await page.content()).not.toContain(newKey);

    // Revoke: the dialog says what happens; Cancel does nothing, the confirm button revokes.
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('stops working at once').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await me(newKey)).status).toBe(200);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('row', { name: /ci-bot.*revoked/ }).waitFor();
    expect((await me(newKey)).status).toBe(401);
    const listed = await t.api('GET', '/v1/memory/keys');
    expect(listed.body.find((k: { label: string }) => k.label === 'ci-bot').revoked_at).toEqual(expect.any(String));
    // A revoked key is no agent any more.
    await until('agents list without the revoked key', async () =>
      (await page
        .getByRole('table', { name: 'Agents' })
        .getByRole('row', { name: /ci-bot/ })
        .count()) === 0
        ? true
        : undefined,
    );
  });

  it("shows the service's refusal to revoke the last active key", async () => {
    const { t, page } = await signedIn();
    await page.goto(`${server.url}/keys`);
    const row = page.getByRole('row', { name: /this dashboard/ }).first();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('alert').filter({ hasText: 'last active API key cannot be revoked' }).waitFor();
    expect((await me(t.key)).status).toBe(200);
  });

  it("changes a key's role, shows the refusal to demote the last admin key, and follows its own key's demotion", async () => {
    const { t, page } = await signedIn();
    const helper = await t.newKey('helper');
    const role = async (id: string) => (await t.api('GET', '/v1/memory/keys')).body.find((k: { id: string }) => k.id === id).role;
    await page.goto(`${server.url}/keys`);
    const table = page.getByRole('table', { name: 'API keys' });
    const helperRow = table.getByRole('row', { name: /helper/ });
    const ownRow = table.getByRole('row', { name: /this dashboard/ });

    await helperRow.getByRole('button', { name: 'Make admin' }).click();
    await helperRow.getByRole('button', { name: 'Make agent' }).waitFor();
    expect(await role(helper.id)).toBe('admin');
    await helperRow.getByRole('button', { name: 'Make agent' }).click();
    await helperRow.getByRole('button', { name: 'Make admin' }).waitFor();
    expect(await role(helper.id)).toBe('agent');

    // The dashboard's key is the last admin key: the service refuses, and says why.
    const ownId = (await me(t.key)).body.key.id;
    await ownRow.getByRole('button', { name: 'Make agent' }).click();
    await page.getByRole('alert').filter({ hasText: 'last active admin key' }).waitFor();
    expect(await role(ownId)).toBe('admin');

    // With another admin key, the dashboard's own key may become an agent: its admin controls go.
    await helperRow.getByRole('button', { name: 'Make admin' }).click();
    await helperRow.getByRole('button', { name: 'Make agent' }).waitFor();
    await ownRow.getByRole('button', { name: 'Make agent' }).click();
    await page.getByRole('button', { name: 'Create key' }).waitFor({ state: 'detached' });
    expect(await role(ownId)).toBe('agent');
    expect(await page.getByRole('button', { name: /Make (admin|agent)/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Rotate key' }).waitFor();
  });

  it("rotates the dashboard's key: the new one is shown once and signed in with, the old one stops working", async () => {
    const { t, page } = await signedIn();
    await page.goto(`${server.url}/keys`);
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate', exact: true }).click();
    const shown = page.getByLabel('Rotated API key');
    await shown.waitFor();
    const fresh = await shown.inputValue();
    expect(fresh).toMatch(/^mv_/);
    expect((await me(t.key)).status).toBe(401);
    const now = await me(fresh);
    expect(now.status).toBe(200);
    // The dashboard now marks the new key as its own and keeps working across a reload.
    await until('the new key marked', async () => ((await page.getByRole('row', { name: /revoked/ }).count()) === 1 ? true : undefined));
    await page.reload();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(page.url()).toBe(`${server.url}/keys`);
    await page
      .getByRole('row', { name: /this dashboard/ })
      .first()
      .waitFor();
    expect(
      await page
        .getByRole('row', { name: /this dashboard/ })
        .first()
        .textContent(),
    ).toContain('active');
  });

  it('a read-only key sees keys, grants and settings with no forms or write buttons', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await t.api('POST', '/v1/memory/collections', { name: 'notes' });
    const reader = await t.newKey('reader', true);
    const page = await openPage(browser);
    await signIn(page, server.url, reader.key);

    await page.goto(`${server.url}/keys`);
    await page
      .getByRole('row', { name: /reader.*this dashboard/ })
      .first()
      .waitFor();
    await page
      .getByRole('table', { name: 'Agents' })
      .getByRole('row', { name: /reader/ })
      .waitFor();
    for (const name of ['Create key', 'Revoke', 'Rotate key', 'Make admin', 'Make agent'])
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    expect(await page.getByRole('textbox').count()).toBe(0);

    await page.goto(`${server.url}/settings`);
    await page.getByText('No webhook is configured.').waitFor();
    await fact(page, 'Monthly cap').filter({ hasText: 'No cap' }).waitFor();
    await fact(page, 'Extraction uses').waitFor();
    expect(await page.locator('main form').count()).toBe(0);
    expect(await page.getByRole('textbox').count()).toBe(0);
    expect(await page.getByRole('button', { name: /Save|Remove|Test/ }).count()).toBe(0);

    await page.goto(`${server.url}/collections/notes/grants`);
    await page.getByText('Every key of the account can use this collection').waitFor();
    expect(await page.getByRole('button', { name: /Save grant|Remove|Change/ }).count()).toBe(0);
    expect(await page.getByRole('combobox').count()).toBe(0);
  });

  it('an agent key sees no key, grant or settings controls, which need an admin key, but may rotate itself', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await t.api('POST', '/v1/memory/collections', { name: 'notes' });
    const agent = await t.newKey('worker');
    const page = await openPage(browser);
    await signIn(page, server.url, agent.key);
    await page.getByText('agent key', { exact: true }).waitFor();

    await page.goto(`${server.url}/keys`);
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row', { name: /worker.*this dashboard/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('agent');
    await page.getByRole('button', { name: 'Rotate key' }).waitFor();
    for (const name of ['Create key', 'Revoke', 'Make admin', 'Make agent']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);

    await page.goto(`${server.url}/settings`);
    await page.getByText('This is an agent key').waitFor();
    await page.getByText('No webhook is configured.').waitFor();
    expect(await page.locator('main form').count()).toBe(0);
    expect(await page.getByRole('button', { name: /Save|Remove|Test/ }).count()).toBe(0);

    await page.goto(`${server.url}/collections/notes/grants`);
    await page.getByText('Every key of the account can use this collection').waitFor();
    expect(await page.getByRole('button', { name: /Save grant|Remove|Change/ }).count()).toBe(0);
    // What the dashboard hides, the API refuses.
    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: 'https://hooks.example/x' }, agent.key)).status).toBe(403);
  });

  it('grants an agent read-only access to a collection, which restricts it, and removes the grant', async () => {
    const { t, page } = await signedIn();
    await t.api('POST', '/v1/memory/collections', { name: 'shared' });
    const agent = await t.newKey('agent-a');
    const dashboardKeyId = (await me(t.key)).body.key.id;

    await page.goto(`${server.url}/collections/shared/grants`);
    await page.getByText('Every key of the account can use this collection').waitFor();
    expect(await page.getByText('open to every key of the account until its first grant').isVisible()).toBe(true);
    await page.getByLabel('Agent').selectOption({ label: 'agent-a' });
    expect(await page.getByLabel('Can read').isChecked()).toBe(true);
    expect(await page.getByLabel('Can write').isChecked()).toBe(false);
    expect(await page.getByLabel(/Also grant this dashboard's key/).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Save grant' }).click();

    const grantsTable = page.getByRole('table', { name: 'Grants' });
    await grantsTable.getByRole('row', { name: /agent-a/ }).waitFor();
    await page.getByText('Only the keys, people and teams below can use this collection').waitFor();
    await screenshot(page, 'grants-1280');

    const grants = await t.api('GET', '/v1/memory/collections/shared/grants');
    expect(grants.body.restricted).toBe(true);
    expect(grants.body.grants).toEqual(
      expect.arrayContaining([
        { kind: 'key', id: agent.id, agent_key_id: agent.id, label: 'agent-a', can_read: true, can_write: false },
        expect.objectContaining({ agent_key_id: dashboardKeyId, can_read: true, can_write: true }),
      ]),
    );
    const listed = await t.api('GET', '/v1/memory/collections');
    expect(listed.body.find((c: { name: string }) => c.name === 'shared').restricted).toBe(true);
    // The grant does what it says: agent-a reads, but may not write.
    expect((await t.api('GET', '/v1/memory/collections/shared/grants', undefined, agent.key)).status).toBe(200);
    expect((await t.api('POST', '/v1/memory/collections/shared/memories', { text: 'x' }, agent.key)).status).toBe(403);

    // Remove agent-a's grant through the confirm dialog.
    await grantsTable
      .getByRole('row', { name: /agent-a/ })
      .getByRole('button', { name: 'Remove' })
      .click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove grant' }).click();
    await until('agent-a grant gone from the page', async () => ((await grantsTable.getByRole('row', { name: /agent-a/ }).count()) === 0 ? true : undefined));
    const after = await t.api('GET', '/v1/memory/collections/shared/grants');
    expect(after.body.grants.map((g: { agent_key_id: string }) => g.agent_key_id)).toEqual([dashboardKeyId]);
  });

  for (const width of [1280, 390] as const) {
    it(`shows how deliveries go at ${width} px: a suspended webhook with its reason and dead letters, resumed by a test event, its dead letters replayed`, async () => {
      const { t, page } = await signedIn({ width });
      expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
      const reason = `10 tries in a row failed; the last: Event 0190c3f2-${'x'.repeat(120)} (memory.created) failed: the target answered 500`;
      await server.app.db.query('update webhooks set suspended_at = now(), suspended_reason = $2, failures = 10 where tenant_id = $1', [t.id, reason]);
      // Written while suspended: kept as dead letters at once.
      const written = await t.api('POST', '/v1/memory/collections/held/memories/bulk', [{ text: 'held one' }, { text: 'held two' }]);
      expect(written.status).toBe(201);

      if (width === 390) await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('link', { name: 'Settings' }).click();
      const card = page.getByRole('region', { name: 'Webhook' });
      await fact(page, 'State').filter({ hasText: 'Suspended' }).waitFor();
      expect(await fact(page, 'Why').textContent()).toBe(reason);
      expect(await fact(page, 'Dead letters').textContent()).toBe('2');
      const letters = card.getByRole('list', { name: /^Dead letters/ });
      await letters.waitFor();
      expect(await letters.getByRole('listitem').count()).toBe(2);
      expect(await letters.getByRole('listitem').first().textContent()).toContain('The webhook was suspended when the event happened');
      // A suspended webhook cannot replay before it is resumed; nothing overflows the page.
      expect(await card.getByRole('button', { name: 'Replay dead letters' }).count()).toBe(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await screenshot(page, `webhook-suspended-${width}`);

      const before = receiver.received.length;
      await card.getByRole('button', { name: 'Send a test event' }).click();
      await card.getByText('The test event was delivered (204); deliveries resumed.').waitFor();
      await fact(page, 'State').filter({ hasText: 'Delivering' }).waitFor();
      expect((await t.api('GET', '/v1/memory/webhook/config')).body).toMatchObject({ state: 'active', suspended_reason: null });

      await card.getByRole('button', { name: 'Replay dead letters' }).click();
      await fact(page, 'Dead letters').filter({ hasText: /^0$/ }).waitFor();
      const texts = (await receiver.waitFor(0, 20_000, (r) => r.slice(before).filter((x) => x.body.includes('held')).length >= 2))
        .slice(before)
        .map((x) => JSON.parse(x.body) as { type: string; data: { memory?: { text: string } } })
        .map((e) => e.data.memory?.text ?? e.type);
      expect(texts).toEqual(['webhook.test', 'held one', 'held two']);
    });
  }

  it('sets a webhook and shows its signing secret once; sets and clears a spend cap; shows the extraction self-test failure', async () => {
    const { t, page } = await signedIn();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByText('No webhook is configured.').waitFor();
    // Where the memories live: on the embedded database a database of one's own is not available, said as such.
    const database = page.getByRole('region', { name: 'Database' });
    if (process.env.TEST_DATABASE_URL) await fact(page, 'Your memories live in').filter({ hasText: "the platform's database" }).waitFor();
    else await database.getByText('A database of your own is not available on this server').waitFor();
    expect(await database.getByRole('alert').count()).toBe(0);

    // Webhook: the secret shown is the one the deliveries are signed with.
    await page.getByLabel('Webhook URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    const secretField = page.getByLabel('Signing secret');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect((await t.api('GET', '/v1/memory/webhook/config')).body.url).toBe(receiver.url);
    await page.getByText(`Sending to ${receiver.url}`).waitFor();
    await t.api('POST', '/v1/memory/collections', { name: 'hooked' });
    const created = await t.api('POST', '/v1/memory/collections/hooked/memories', { text: 'The webhook carries this.' });
    expect(created.status).toBe(201);
    await receiver.waitFor(1, 15_000, (r) => r.some((x) => x.body.includes(created.body.id)));
    const got = receiver.received.find((x) => x.body.includes(created.body.id))!;
    expect(got.headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', secret).update(got.body).digest('hex')}`);

    // Spend cap: set, then cleared through the confirm dialog.
    await page.getByLabel('Monthly cap (USD)').fill('12.5');
    await page.getByRole('button', { name: 'Save cap' }).click();
    await fact(page, 'Monthly cap').filter({ hasText: '12.50' }).waitFor();
    expect((await t.api('GET', '/v1/memory/spend-cap')).body.monthly_usd).toBe(12.5);
    await page.getByRole('button', { name: 'Remove cap' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove cap' }).click();
    await fact(page, 'Monthly cap').filter({ hasText: 'No cap' }).waitFor();
    expect((await t.api('GET', '/v1/memory/spend-cap')).body.monthly_usd).toBeNull();

    // Extraction: an endpoint nobody listens on fails the live self-test; its 400 detail is shown and nothing is saved.
    const port = await closedPort();
    await page.getByLabel('Base URL').fill(`http://127.0.0.1:${port}/v1`);
    await page.getByLabel('Model').fill('gpt-4o-mini');
    await page.getByLabel('API key', { exact: true }).fill('sk-test');
    await page.getByRole('button', { name: 'Test and save' }).click();
    const failure = page.getByRole('alert').filter({ hasText: 'failed its self-test' });
    await failure.waitFor();
    expect(await failure.textContent()).toContain('The extraction endpoint failed its self-test');
    expect((await t.api('GET', '/v1/memory/extraction/config')).body.configured).toBe(false);
    await screenshot(page, 'settings-1280');

    // Shown once: after a reload the secret is gone, the URL stays.
    await page.reload();
    await page.getByText(`Sending to ${receiver.url}`).waitFor();
    expect(await page.getByLabel('Signing secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
  });

  it('shows usage: the memory count, memories per collection, limits and, for an admin tenant, the audit log', async () => {
    const { t, page } = await signedIn({ admin: true });
    for (const [name, n] of [
      ['alpha', 3],
      ['beta', 1],
    ] as const) {
      expect((await t.api('POST', '/v1/memory/collections', { name })).status).toBe(201);
      for (let i = 0; i < n; i++)
        expect((await t.api('POST', `/v1/memory/collections/${name}/memories`, { text: `${name} fact number ${i}` })).status).toBe(201);
    }
    const stats = (await t.api('GET', '/v1/memory/admin/stats')).body;
    expect(stats.memories).toBe(4);

    await page.getByRole('link', { name: 'Usage' }).click();
    await fact(page, 'Memories').first().filter({ hasText: /^4$/ }).waitFor();
    await page.locator('.bars li', { hasText: 'alpha' }).filter({ hasText: /3$/ }).waitFor();
    await page.locator('.bars li', { hasText: 'beta' }).filter({ hasText: /1$/ }).waitFor();
    await page.locator('.bars li', { hasText: 'Last 7 days' }).filter({ hasText: /4$/ }).waitFor();
    await fact(page, 'Requests per minute').waitFor();
    const audit = page.getByRole('table', { name: 'Audit log' });
    await audit
      .getByRole('row', { name: /collections\.create/ })
      .first()
      .waitFor();
    await screenshot(page, 'usage-1280');

    // Not an admin: no audit section, and no error either.
    const other = await signedIn();
    await other.page.goto(`${server.url}/usage`);
    await fact(other.page, 'Memories').first().waitFor();
    await fact(other.page, 'Requests per minute').waitFor();
    expect(await other.page.getByRole('heading', { name: 'Audit log' }).count()).toBe(0);
    expect(await other.page.getByRole('alert').count()).toBe(0);
  });

  it('works at 390 pixels wide', async () => {
    const { t, page } = await signedIn({ width: 390 });
    await t.newKey('phone-agent');
    await page.goto(`${server.url}/keys`);
    await page
      .getByRole('table', { name: 'API keys' })
      .getByRole('row', { name: /phone-agent/ })
      .waitFor();
    // Wide tables scroll inside their wrapper; the page itself does not scroll sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByLabel('Label').fill('from-phone');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('New API key').waitFor();
    await screenshot(page, 'keys-390');
  });
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { signedIn } from './support/people.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The dashboard's people, teams, grants to people and teams, and collection scopes
 * (docs/people.md) in real Chromium against a real server, signed in as a person (their session
 * token pasted as the key, which authentication takes as a bearer). Every change made in the UI is
 * checked again over REST.
 */
describe('dashboard: people, teams, grants and scopes', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const mainNav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  /** Opens a link of the main navigation, through the Menu button on a phone. */
  async function open(page: Page, width: number, link: string) {
    if (width === 390) await page.getByRole('button', { name: 'Menu' }).click();
    await mainNav(page).getByRole('link', { name: link }).click();
  }
  const person = async (t: Tenant, email: string) =>
    ((await t.api('GET', '/v1/memory/people')).body as Array<{ id: string; email: string; role: string; state: string }>).find((p) => p.email === email);
  /** The page does not scroll sideways; if it does, the elements that stick out say why. */
  const noSidewaysScroll = async (page: Page) =>
    expect(
      await page.evaluate(() =>
        document.scrollingElement!.scrollWidth > window.innerWidth
          ? [...document.querySelectorAll('main *')]
              .filter((e) => e.getBoundingClientRect().right > window.innerWidth && !e.closest('.table-wrap'))
              .map((e) => `${e.tagName}#${e.id}.${e.className}`)
          : [],
      ),
    ).toEqual([]);

  for (const width of [1280, 390] as const) {
    it(`at ${width} px an owner invites, changes a role, suspends, makes a team, grants it a collection and sees the scope; demoting the last owner is refused`, async () => {
      const t = await newTenant(server.url, server.adminKey);
      const owner = await signedIn(server.url, server.app, t, 'owner@acme.test', 'owner');
      const ben = await signedIn(server.url, server.app, t, 'ben@acme.test');
      expect((await t.api('POST', '/v1/memory/collections', { name: 'roadmap' })).status).toBe(201);
      const page = await openPage(browser, width);
      await signIn(page, server.url, owner.session);

      // People: invite one with a role.
      await open(page, width, 'People');
      await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
      const people = page.getByRole('table', { name: 'People' });
      await people.getByRole('row', { name: /ben@acme\.test/ }).waitFor();
      await page.getByLabel('E-mail').fill('ana@acme.test');
      await page.getByLabel('Role', { exact: true }).selectOption('admin');
      await page.getByRole('button', { name: 'Invite', exact: true }).click();
      const ana = people.getByRole('row', { name: /ana@acme\.test/ });
      await ana.waitFor();
      expect(await ana.textContent()).toContain('invited');
      expect(await person(t, 'ana@acme.test')).toMatchObject({ role: 'admin', state: 'invited' });

      // Change her role.
      await page.getByLabel('Role of ana@acme.test').selectOption('viewer');
      await until('ana a viewer', async () => ((await person(t, 'ana@acme.test'))?.role === 'viewer' ? true : undefined));

      // Suspend Ben through the dialog: his key is refused; then restore him.
      const benRow = people.getByRole('row', { name: /ben@acme\.test/ });
      await benRow.getByRole('button', { name: 'Suspend ben@acme.test' }).click();
      await page.getByRole('dialog').getByText('Their sessions end at once').waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Suspend', exact: true }).click();
      await benRow.getByText('suspended').waitFor();
      expect((await person(t, 'ben@acme.test'))!.state).toBe('suspended');
      expect((await call(server.url, 'GET', '/v1/memory/collections', { key: ben.key })).status).toBe(401);
      await benRow.getByRole('button', { name: 'Restore ben@acme.test' }).click();
      await until('ben active again', async () => ((await person(t, 'ben@acme.test'))?.state === 'active' ? true : undefined));
      expect((await call(server.url, 'GET', '/v1/memory/collections', { key: ben.key })).status).toBe(200);

      // The refusal: the owner is the last active owner, and the service says so.
      await page.getByLabel('Role of owner@acme.test').selectOption('admin');
      await page.getByRole('alert').filter({ hasText: 'without an active owner' }).waitFor();
      expect((await person(t, 'owner@acme.test'))!.role).toBe('owner');
      await noSidewaysScroll(page);
      await screenshot(page, `people-${width}`);

      // Teams: create one, add Ben as its admin.
      await page.getByRole('navigation', { name: 'People and teams' }).getByRole('link', { name: 'Teams' }).click();
      await page.getByRole('heading', { name: 'Teams', level: 1 }).waitFor();
      await page.getByLabel('Team name').fill('Payments');
      await page.getByRole('button', { name: 'Create team' }).click();
      const card = page.getByRole('listitem', { name: 'Team Payments' });
      await card.waitFor();
      await card.getByLabel('Person').selectOption({ label: 'ben@acme.test' });
      await card.getByLabel('Team role').selectOption('admin');
      await card.getByRole('button', { name: 'Add to team' }).click();
      await card.getByRole('list', { name: 'Members of Payments' }).getByText('ben@acme.test').waitFor();
      // The owner joins too: a team collection is read by its teams' people only, an owner's scope included.
      await card.getByLabel('Person').selectOption({ label: 'owner@acme.test' });
      await card.getByLabel('Team role').selectOption('member');
      await card.getByRole('button', { name: 'Add to team' }).click();
      await card.getByRole('list', { name: 'Members of Payments' }).getByText('owner@acme.test').waitFor();
      const teams = (await t.api('GET', '/v1/memory/teams')).body as Array<{ id: string; name: string; members: Array<{ email: string; role: string }> }>;
      const payments = teams.find((x) => x.name === 'Payments')!;
      expect(payments.members).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ email: 'ben@acme.test', role: 'admin' }),
          expect.objectContaining({ email: 'owner@acme.test', role: 'member' }),
        ]),
      );
      await noSidewaysScroll(page);
      await screenshot(page, `teams-${width}`);

      // Grant the team a collection: the picker has the three kinds, and no key that acts for a person.
      await page.goto(`${server.url}/collections/roadmap/grants`);
      await page.getByText('Every key of the account can use this collection').waitFor();
      await page.getByLabel('Grant to').selectOption('key');
      const keyOptions = await page.getByLabel('Agent').locator('option').allTextContents();
      expect(keyOptions.join('\n')).not.toContain("ben@acme.test's agent");
      expect(keyOptions.join('\n')).not.toContain("owner@acme.test's agent");
      await page.getByLabel('Grant to').selectOption('team');
      await page.getByLabel('Team', { exact: true }).selectOption({ label: 'Payments' });
      await page.getByLabel('Can write').check();
      expect(await page.getByLabel(/Also grant this dashboard's person/).isChecked()).toBe(true);
      await page.getByRole('button', { name: 'Save grant' }).click();
      const grantsTable = page.getByRole('table', { name: 'Grants' });
      await grantsTable.getByRole('row', { name: /Payments.*team/ }).waitFor();
      await grantsTable.getByRole('row', { name: /owner@acme\.test.*person/ }).waitFor();
      // Restricted now: the tenant's own key is not granted, the owner's session is.
      const grants = (await call(server.url, 'GET', '/v1/memory/collections/roadmap/grants', { key: owner.session })).body;
      expect(grants.grants).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'team', id: payments.id, can_read: true, can_write: true }),
          expect.objectContaining({ kind: 'person', id: owner.id, can_read: true, can_write: true }),
        ]),
      );
      // The grant does what it says: Ben, through his team, writes the collection.
      expect((await call(server.url, 'POST', '/v1/memory/collections/roadmap/memories', { key: ben.key, body: { text: 'Ship in May' } })).status).toBe(201);
      await noSidewaysScroll(page);
      await screenshot(page, `grants-people-${width}`);

      // A team collection made in the dashboard, and each card's scope badge.
      await open(page, width, 'Collections');
      await page.getByLabel('Name', { exact: true }).fill('payments-notes');
      await page.getByLabel('Scope').selectOption('team');
      await page.getByLabel('Payments').check();
      await page.getByRole('button', { name: 'Create collection' }).click();
      await page.waitForURL(`${server.url}/collections/payments-notes`);
      const made = (
        (await call(server.url, 'GET', '/v1/memory/collections', { key: ben.key })).body as Array<{ name: string; scope: string; teams: string[] }>
      ).find((c) => c.name === 'payments-notes');
      expect(made).toMatchObject({ scope: 'team', teams: [payments.id] });
      await open(page, width, 'Collections');
      const cards = page.getByRole('list', { name: 'Collections' });
      await cards.getByRole('listitem').filter({ hasText: 'payments-notes' }).getByText('team: Payments').waitFor();
      await cards.getByRole('listitem').filter({ hasText: 'roadmap' }).getByText('org', { exact: true }).waitFor();
      await noSidewaysScroll(page);
      await screenshot(page, `collections-scope-${width}`);
      await page.context().close();
    });
  }

  it('a member reads people and teams with no controls; as a team admin manages only their own team, and sees the refusal for another', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await signedIn(server.url, server.app, t, 'owner@acme.test', 'owner');
    const ben = await signedIn(server.url, server.app, t, 'ben@acme.test');
    const cleo = await signedIn(server.url, server.app, t, 'cleo@acme.test');
    const payments = (await t.api('POST', '/v1/memory/teams', { name: 'Payments' })).body.id as string;
    const search = (await t.api('POST', '/v1/memory/teams', { name: 'Search' })).body.id as string;
    expect((await t.api('PUT', `/v1/memory/teams/${payments}/members/${ben.id}`, { role: 'admin' })).status).toBe(200);
    const page = await openPage(browser);
    await signIn(page, server.url, ben.session);

    await page.goto(`${server.url}/people`);
    await page
      .getByRole('table', { name: 'People' })
      .getByRole('row', { name: /cleo@acme\.test/ })
      .waitFor();
    expect(await page.getByRole('button', { name: /Invite|Suspend|Remove|Restore/ }).count()).toBe(0);
    expect(await page.getByRole('combobox').count()).toBe(0);

    await page.goto(`${server.url}/teams`);
    const own = page.getByRole('listitem', { name: 'Team Payments' });
    await own.waitFor();
    expect(await page.getByRole('button', { name: /Create team|Edit|Delete/ }).count()).toBe(0);
    await own.getByLabel('Person').selectOption({ label: 'cleo@acme.test' });
    await own.getByRole('button', { name: 'Add to team' }).click();
    await own.getByRole('list', { name: 'Members of Payments' }).getByText('cleo@acme.test').waitFor();

    const other = page.getByRole('listitem', { name: 'Team Search' });
    await other.getByLabel('Person').selectOption({ label: 'cleo@acme.test' });
    await other.getByRole('button', { name: 'Add to team' }).click();
    await other.getByRole('alert').filter({ hasText: 'Only an admin of the tenant or of team "Search"' }).waitFor();
    const teams = (await t.api('GET', '/v1/memory/teams')).body as Array<{ id: string; members: Array<{ person_id: string }> }>;
    expect(teams.find((x) => x.id === payments)!.members.map((m) => m.person_id)).toContain(cleo.id);
    expect(teams.find((x) => x.id === search)!.members).toEqual([]);
    await page.context().close();
  });
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { call, newTenant } from './support/client.ts';
import { signedIn, type SignedIn } from './support/people.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * Promotion with review on the dashboard (docs/promotion.md) in real Chromium against a real
 * server: a person proposes a memory of their personal collection from its page ("Propose to…"),
 * sees it among their proposals; the team's admin accepts one and rejects another with a reason on
 * the Review page, and a decision taken meanwhile elsewhere is refused with the service's detail.
 * Each step is checked over REST.
 */
const P = '/v1/memory/promotions';
const KEPT = 'Refunds over 500 EUR need a second approver';
const DROPPED = 'Ana lunches at noon';
const RACED = 'The payments on-call rotates on Mondays';

describe('web: promotions', () => {
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

  /** The page does not scroll sideways at any width. */
  const noSidewaysScroll = async (page: Page) =>
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width);
  const item = (page: Page, list: string, text: string) => page.getByRole('list', { name: list }).getByRole('article').filter({ hasText: text });

  for (const width of [1280, 390] as const) {
    it(`at ${width} px a person proposes from a memory's page; the team admin accepts one and rejects one with a reason`, { timeout: 120_000 }, async () => {
      const t = await newTenant(server.url, server.adminKey);
      const ana: SignedIn = await signedIn(server.url, server.app, t, 'ana@acme.test');
      const pat: SignedIn = await signedIn(server.url, server.app, t, 'pat@acme.test');
      const team = (await t.api('POST', '/v1/memory/teams', { name: 'Payments' })).body.id;
      await t.api('PUT', `/v1/memory/teams/${team}/members/${ana.id}`, { role: 'member' });
      await t.api('PUT', `/v1/memory/teams/${team}/members/${pat.id}`, { role: 'admin' });
      expect((await t.api('POST', '/v1/memory/collections', { name: 'payments-notes', scope: 'team', teams: [team] })).status).toBe(201);
      const ids: Record<string, string> = {};
      for (const text of [KEPT, DROPPED, RACED]) {
        const res = await call(server.url, 'POST', '/v1/memory/collections/ana-sessions/memories', {
          key: ana.key,
          headers: { 'x-orgmem-via': 'hook' },
          body: { text },
        });
        expect(res.status).toBe(201);
        ids[text] = res.body.id;
      }

      // Ana proposes KEPT from its page.
      const page = await openPage(browser, width);
      await signIn(page, server.url, ana.key);
      await page.goto(`${server.url}/collections/ana-sessions/memories/${ids[KEPT]}`);
      await page.getByRole('button', { name: 'Propose to…' }).click();
      const form = page.getByRole('form', { name: 'Propose to a collection' });
      await form.getByLabel('Collection').selectOption('payments-notes');
      await form.getByLabel('Note for the reviewers (optional)').fill('The whole team needs this');
      await form.getByRole('button', { name: 'Propose' }).click();
      await page.getByRole('status').filter({ hasText: 'Proposed to payments-notes' }).waitFor();
      const mine = (await call(server.url, 'GET', `${P}?as=proposer`, { key: ana.key })).body.promotions;
      expect(mine).toMatchObject([{ state: 'proposed', memory_ids: [ids[KEPT]], to_collection: 'payments-notes', note: 'The whole team needs this' }]);
      // A team collection's memory has no such action.
      const teamMemory = (await call(server.url, 'POST', '/v1/memory/collections/payments-notes/memories', { key: ana.key, body: { text: 'a team note' } }))
        .body.id;
      await page.goto(`${server.url}/collections/payments-notes/memories/${teamMemory}`);
      await page.getByRole('heading', { name: 'Details' }).waitFor();
      expect(await page.getByRole('button', { name: 'Propose to…' }).count()).toBe(0);

      // Two more, over REST; RACED is withdrawn behind the reviewer's back below.
      for (const text of [DROPPED, RACED]) {
        const res = await call(server.url, 'POST', P, {
          key: ana.key,
          body: { memory_ids: [ids[text]], from_collection: 'ana-sessions', to_collection: 'payments-notes' },
        });
        expect(res.status).toBe(201);
        ids[`p:${text}`] = res.body.id;
      }
      await page.goto(`${server.url}/review`);
      await item(page, 'Your proposals', KEPT).getByText('proposed', { exact: true }).waitFor();
      expect(await page.getByRole('list', { name: 'To review' }).count()).toBe(0);
      await page.getByText('Nothing is proposed to a collection you review.').waitFor();

      // Pat reviews.
      const review = await openPage(browser, width);
      await signIn(review, server.url, pat.key);
      await review.goto(`${server.url}/review`);
      const kept = item(review, 'To review', KEPT);
      await kept.waitFor();
      await kept.getByText('The whole team needs this').waitFor();
      await kept.getByText('Proposed by ana@acme.test').waitFor();
      expect(await item(review, 'To review', DROPPED).count()).toBe(1);
      await screenshot(review, `promotions-review-${width}`);
      await noSidewaysScroll(review);

      await kept.getByRole('button', { name: 'Accept' }).click();
      await review.getByRole('status').filter({ hasText: 'Accepted: the promotion to payments-notes' }).waitFor();
      const accepted = (await call(server.url, 'GET', `${P}/${mine[0].id}`, { key: pat.key })).body;
      expect(accepted).toMatchObject({ state: 'accepted', decided_by: { id: pat.id } });
      const copy = (await call(server.url, 'GET', `/v1/memory/collections/payments-notes/memories/${accepted.created_memory_ids[0]}`, { key: pat.key })).body;
      expect(copy).toMatchObject({ text: KEPT, metadata: { promoted_from: { memory_id: ids[KEPT], promotion_id: mine[0].id } } });

      // Rejecting takes a reason: the button waits for one.
      const dropped = item(review, 'To review', DROPPED);
      expect(await dropped.getByRole('button', { name: 'Reject' }).isDisabled()).toBe(true);
      await dropped.getByLabel('Reason to reject').fill('Personal, not the team’s');
      await dropped.getByRole('button', { name: 'Reject' }).click();
      await review.getByRole('status').filter({ hasText: 'Rejected: the promotion to payments-notes' }).waitFor();
      expect((await call(server.url, 'GET', `${P}/${ids[`p:${DROPPED}`]}`, { key: ana.key })).body).toMatchObject({
        state: 'rejected',
        reason: 'Personal, not the team’s',
      });

      // Withdrawn meanwhile: accepting it shows the service's refusal, and the list drops it.
      const withdrawn = await call(server.url, 'POST', `${P}/${ids[`p:${RACED}`]}/withdraw`, { key: ana.key });
      expect(withdrawn.status).toBe(200);
      await item(review, 'To review', RACED).getByRole('button', { name: 'Accept' }).click();
      await review.getByRole('alert').filter({ hasText: 'was withdrawn already' }).waitFor();
      await item(review, 'To review', RACED).waitFor({ state: 'detached' });
      await review.getByText('Nothing is proposed to a collection you review.').waitFor();

      // Ana reads the decisions and the reason.
      await page.reload();
      await item(page, 'Your proposals', DROPPED).getByText('“Personal, not the team’s”', { exact: false }).waitFor();
      await item(page, 'Your proposals', KEPT).getByText('accepted', { exact: true }).waitFor();
      await noSidewaysScroll(page);
      await screenshot(page, `promotions-mine-${width}`);
      await page.context().close();
      await review.context().close();
    });
  }
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { NOISE, seedNotes } from './support/consolidation.ts';
import { col } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The dashboard's Review page in real Chromium against a real server: a consolidation run proposed
 * from the page, its changes with their evidence, one applied, undone, the rest rejected, and the
 * collection's settings saved, each checked over REST; at 390 px nothing scrolls sideways and the
 * evidence stacks; an agent key sees the change set without the admin's controls.
 */
let server: TestServer;
let browser: Browser;
let t: Tenant;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  browser = await launchBrowser();
  t = await newTenant(server.url, server.adminKey);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const seed = () => seedNotes(server, t);

const change = (page: Page, kind: string) => page.getByRole('article', { name: new RegExp(`^${kind} `) });
const stateOf = (page: Page, kind: string, state: string) =>
  until(`the ${kind} change ${state}`, async () => ((await change(page, kind).getAttribute('data-state')) === state ? true : undefined));
const memory = async (id: string) => (await t.api('GET', `${col('notes')}/memories/${id}`)).body;
const changesets = async () => (await t.api('GET', `${col('notes')}/changesets`)).body.changesets as any[];
const reviewUrl = (id: string) => `${server.url}/review?collection=notes&changeset=${id}`;

describe('web: review', () => {
  it('an admin key proposes a clean-up, applies a change, undoes it and rejects the rest; the settings are saved', { timeout: 120_000 }, async () => {
    await seed();
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Review' }).click();
    await page.getByRole('heading', { name: 'Review', level: 1 }).waitFor();
    await page.getByLabel('Collection', { exact: true }).selectOption('notes');
    await page.getByText('No change sets yet.').waitFor();

    // Propose: the run opens at once and is followed until its changes wait for review.
    await page.getByRole('button', { name: 'Propose a clean-up' }).click();
    await page.getByRole('list', { name: 'Changes' }).waitFor();
    const [set] = await changesets();
    expect(set).toMatchObject({ state: 'open', trigger: 'request' });
    expect(page.url()).toBe(reviewUrl(set.id));
    const full = (await t.api('GET', `${col('notes')}/changesets/${set.id}`)).body;
    const merge = full.changes.find((c: any) => c.kind === 'merge');
    const others = full.changes.filter((c: any) => c !== merge);
    expect(others.map((c: any) => c.kind).sort()).toEqual(['archive', 'supersede']);
    await page.getByRole('list', { name: 'Change sets' }).getByText(`${full.changes.length} proposed`).waitFor();

    // The merge's evidence: the three memories side by side, the kept one marked, with what a reviewer weighs.
    const m = change(page, 'merge');
    expect(await m.getAttribute('data-state')).toBe('proposed');
    await m.getByText(merge.evidence.reason).waitFor();
    await m.getByText(`similarity ${merge.evidence.similarity.toFixed(3)}`).waitFor();
    const kept = m.locator('[data-fate="kept"]');
    expect(await kept.count()).toBe(1);
    const keptText = merge.evidence.memories.find((x: any) => x.id === merge.proposal.keep_id).text;
    expect(await kept.getByRole('link').textContent()).toBe(keptText);
    expect(await m.locator('[data-fate="replaced"]').count()).toBe(2);
    for (const label of ['Category', 'Importance', 'Pinned', 'Valid from', 'Valid to', 'Recalls', 'Last recalled', 'Confirmations'])
      await kept.getByText(label, { exact: true }).waitFor();
    const boxes = await m.locator('[data-fate]').evaluateAll((cards) => cards.map((c) => Math.round(c.getBoundingClientRect().top)));
    expect(new Set(boxes).size, 'side by side at 1280 px').toBe(1);
    await change(page, 'archive').locator('[data-fate="archived"]').getByText(NOISE).waitFor();
    await screenshot(page, 'review-1280');

    // Apply the merge only, through the confirmation.
    await m.getByLabel('Select').check();
    await page.getByRole('button', { name: 'Apply selected (1)' }).click();
    await page.getByRole('dialog', { name: 'Apply the selected changes?' }).getByRole('button', { name: 'Apply 1 change' }).click();
    await stateOf(page, 'merge', 'applied');
    for (const id of merge.proposal.memory_ids) expect(await memory(id)).toMatchObject({ archived: true });
    expect(await memory(merge.proposal.keep_id)).toMatchObject({ archived: false });
    expect(await change(page, 'supersede').getAttribute('data-state')).toBe('proposed');

    // Undo it: the merged memories are back.
    await m.getByRole('button', { name: 'Undo' }).click();
    await stateOf(page, 'merge', 'undone');
    for (const id of merge.proposal.memory_ids) expect(await memory(id)).toMatchObject({ archived: false });
    expect(await m.getByRole('button', { name: 'Undo' }).count()).toBe(0);

    // Reject the rest: Cancel keeps them, confirming rejects both and the set is reviewed.
    await page.getByRole('button', { name: 'Reject all' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reject every proposed change?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await changesets())[0].counts.proposed).toBe(2);
    await page.getByRole('button', { name: 'Reject all' }).click();
    await dialog.getByRole('button', { name: 'Reject 2 changes' }).click();
    await stateOf(page, 'supersede', 'rejected');
    await stateOf(page, 'archive', 'rejected');
    expect((await changesets())[0]).toMatchObject({ state: 'reviewed', counts: { proposed: 0, rejected: 2, undone: 1 } });
    expect(await page.getByRole('group', { name: 'Decide the proposed changes' }).count()).toBe(0);
    expect(await memory(others.find((c: any) => c.kind === 'archive').proposal.memory_ids[0])).toMatchObject({ archived: false });

    // The settings: a weekly schedule that applies archives at once.
    const settings = page.getByRole('form', { name: 'Consolidation settings' });
    await settings.getByLabel('Schedule').selectOption('weekly');
    await settings.getByLabel('archive', { exact: true }).check();
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('nothing: every change waits for review').waitFor({ state: 'detached' });
    expect((await t.api('GET', `${col('notes')}/consolidation`)).body).toMatchObject({
      schedule: 'weekly',
      auto_apply: ['archive'],
      next_run_at: expect.any(String),
    });
    await page.context().close();
  });

  it('at 390 px nothing scrolls sideways and the evidence stacks', { timeout: 60_000 }, async () => {
    const [set] = await changesets();
    const page = await openPage(browser, 390);
    await signIn(page, server.url, t.key);
    await page.goto(reviewUrl(set.id));
    await page.getByRole('list', { name: 'Changes' }).waitFor();
    const lefts = await change(page, 'merge')
      .locator('[data-fate]')
      .evaluateAll((cards) => cards.map((c) => Math.round(c.getBoundingClientRect().left)));
    expect(lefts).toHaveLength(3);
    expect(new Set(lefts).size, 'one above the other').toBe(1);
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, 'review-390');
    await page.context().close();
  });

  it('an agent key proposes and reads, without the controls that need an admin key (which the service refuses it)', { timeout: 60_000 }, async () => {
    const agent = await t.newKey('reviewer');
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, agent.key);
    await page.goto(`${server.url}/review?collection=notes`);
    await page.getByText('need an admin key').waitFor();
    await page.getByRole('button', { name: 'Propose a clean-up' }).click();
    await page.getByRole('list', { name: 'Changes' }).waitFor();
    await change(page, 'merge').locator('[data-fate="kept"]').waitFor();
    for (const name of [/^Apply/, /^Reject/, 'Undo', 'Save settings']) expect(await page.getByRole('button', { name }).count()).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);
    await page.getByText('Schedule', { exact: true }).waitFor();

    const open = (await changesets()).find((s) => s.state === 'open');
    const refused = await t.api('POST', `${col('notes')}/changesets/${open.id}/apply`, {}, agent.key);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toEqual(expect.any(String));
    await page.context().close();
  });
});

import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { col, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The dashboard's recall and upkeep pages in real Chromium against a real server with the fake
 * LLM: remember (watching the job to a supersession), the search playground (modes, switches,
 * timing), collection health and reports, and hygiene with its dry runs before anything changes;
 * a read-only key sees the dry runs but no run buttons and no Remember tab.
 */
let fake: FakeLlm;
let server: TestServer;
let browser: Browser;
let t: Tenant;

const PORTO = 'Ana lives in Porto.';
const LISBON = 'Ana moved to Lisbon.';
const WIFI = 'The office wifi password is hunter2.';
const DUP_KEEP = 'The staging server restarts every Sunday night.';
const DUP_DROP = 'The staging server restarts each Sunday night.';
const PARKING = 'Parking permits are renewed in March.';

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake, [[LISBON, PORTO]]);
  fake.on('summarize', () => ({ json: { summary: 'The subject moved from Porto to Lisbon.', themes: ['home'] } }));
  fake.on('profile', () => ({ json: { profile: 'Lives in Lisbon.' } }));
  fake.on('rewrite_query', () => ({ json: { query: 'office wifi password' } }));
  server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
  browser = await launchBrowser();
  t = await newTenant(server.url, server.adminKey);
  for (const [c, text, importance] of [
    ['notes', WIFI, 0.5],
    ['notes', 'Lunch is served at noon in the cafeteria.', 0.5],
    ['notes', 'The quarterly report is due on Friday.', 0.5],
    ['dups', DUP_KEEP, 0.9],
    ['dups', DUP_DROP, 0.3],
    ['dups', PARKING, 0.5],
    ['dups2', DUP_KEEP, 0.9],
    ['dups2', DUP_DROP, 0.3],
  ] as const) {
    const res = await t.api('POST', `${col(c)}/memories`, { text, importance });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fake?.close();
});

/** Waits until the locator's text contains `text`. */
const shows = (what: string, loc: Locator, text: string | RegExp) =>
  until(what, async () => {
    const s = (await loc.count()) ? await loc.first().innerText() : '';
    return (typeof text === 'string' ? s.includes(text) : text.test(s)) ? s : undefined;
  });
const restTexts = async (collection: string) => ((await t.api('GET', `${col(collection)}/memories?limit=200`)).body as any[]).map((m) => m.text).sort();
const card = (page: Page, label: string) => page.locator('dl .card').filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) });

describe('web: remember, search, health and hygiene', () => {
  it('remember watches the job to its facts and shows the fact a new one superseded', { timeout: 120_000 }, async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/me/remember`);
    await page.getByRole('navigation', { name: 'Collection me' }).getByRole('link', { name: 'Remember' }).waitFor();

    await page.getByLabel('Text to remember').fill(PORTO);
    await page.getByRole('button', { name: 'Remember' }).click();
    await page.waitForURL(/job=/);
    const firstJob = new URL(page.url()).searchParams.get('job')!;
    const facts = page.getByRole('table');
    await shows('the first job to finish', facts, PORTO);
    expect(await facts.getByRole('row').nth(1).innerText()).toMatch(/Ana lives in Porto\.\s+fact\s+new/);
    expect(await page.locator('[aria-current=step]').innerText()).toBe('done');

    await page.getByLabel('Text to remember').fill(LISBON);
    await page.getByRole('button', { name: 'Remember' }).click();
    await page.waitForURL((u) => !!u.searchParams.get('job') && u.searchParams.get('job') !== firstJob);
    const secondJob = new URL(page.url()).searchParams.get('job')!;
    // The replaced fact's text is read from the service once the job names it.
    await shows('the superseding fact with the fact it replaced', facts, /Ana moved to Lisbon\.[\s\S]*supersedes[\s\S]*Ana lives in Porto\./);
    const row = facts.getByRole('row').nth(1);
    expect(await row.innerText()).toMatch(/Ana moved to Lisbon\.\s+fact\s+supersedes\s+Ana lives in Porto\./);
    expect(await page.locator('[aria-current=step]').innerText()).toBe('done');
    await screenshot(page, 'remember-1280');

    // Over REST: the job made the supersession the page shows, and the old fact left search.
    const job = (await t.api('GET', `/v1/memory/extract/job/${secondJob}`)).body;
    expect(job).toMatchObject({ state: 'done', facts: [{ text: LISBON, relation: 'supersedes' }] });
    const pairs = (await t.api('GET', `${col('me')}/contradictions`)).body as any[];
    expect(pairs.map((p) => [p.current.text, p.superseded.text])).toEqual([[LISBON, PORTO]]);
    expect(pairs[0].superseded.id).toBe(job.facts[0].supersedes_id);
    expect(await row.getByRole('link', { name: PORTO }).getAttribute('href')).toBe(`/collections/me/memories/${job.facts[0].supersedes_id}`);
    expect(await row.getByRole('link', { name: LISBON }).getAttribute('href')).toBe(`/collections/me/memories/${job.facts[0].id}`);
    const found = (await t.api('POST', `${col('me')}/search`, { query: 'where do I live', mode: 'vector', min_score: 0 })).body.results;
    expect(found.map((r: any) => r.text)).not.toContain(PORTO);
    await page.context().close();
  });

  it('the search playground shows scores, timing and the request; mode, collection and rewrite change it', { timeout: 120_000 }, async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Query', { exact: true }).fill('wifi password');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.getByTestId('search-result');
    await shows('hybrid results', results, WIFI);
    expect(await results.first().innerText()).toMatch(/score [01]\.\d{3}/);
    expect(await card(page, 'Mode').locator('dd').innerText()).toBe('hybrid');
    expect(await card(page, 'Search').locator('dd').innerText()).toMatch(/^[\d.,]+ ms$/);
    expect(await card(page, 'Query embedding').locator('dd').innerText()).toMatch(/^[\d.,]+ ms$/);
    expect(await card(page, 'Cache').locator('dd').innerText()).toBe('miss');
    const hybridScore = await results.first().locator('strong').innerText();
    await screenshot(page, 'search-1280');

    // Vector mode: another request (the address and the request body say so) with cosine scores.
    await page.getByLabel('Mode').selectOption('vector');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/mode=vector/);
    await shows('the vector mode shown', card(page, 'Mode').locator('dd'), 'vector');
    await page.getByText('Request: POST /v1/memory/search').click();
    expect(await page.locator('details pre').innerText()).toContain('"mode": "vector"');
    const rest = (await t.api('POST', '/v1/memory/search', { query: 'wifi password', mode: 'vector' })).body;
    const hrefs = await results.getByRole('link').evaluateAll((as) => as.map((a) => a.getAttribute('href')).filter((h) => h!.includes('/memories/')));
    expect(hrefs).toEqual(rest.results.map((r: any) => `/collections/${r.collection}/memories/${r.id}`));
    expect(await results.first().locator('strong').innerText()).toBe(`score ${rest.results[0].score.toFixed(3)}`);
    expect(await results.first().locator('strong').innerText()).not.toBe(hybridScore);

    // One collection, and the rewrite switch: the collection's own route, and one call to the LLM.
    const rewrites = fake.callsNamed('rewrite_query').length;
    await page.getByLabel('Collection').selectOption('notes');
    await page.getByLabel('Rewrite the query (LLM)').check();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/rewrite=1/);
    await shows('the collection route', page.locator('details summary'), 'Request: POST /v1/memory/collections/notes/search');
    await shows('results of the notes collection', results, WIFI);
    expect(await page.getByText('Query rewrite requested').count()).toBe(1);
    expect(fake.callsNamed('rewrite_query').length).toBe(rewrites + 1);
    await page.context().close();
  });

  it('the health page shows the counts, pipeline, contradiction, summary and profile', { timeout: 120_000 }, async () => {
    await rememberSync(t, 'home', PORTO);
    await rememberSync(t, 'home', LISBON);
    const health = (await t.api('GET', `${col('home')}/health`)).body;
    expect(health).toMatchObject({ supersessions: 1, exists: true });

    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/home`);
    await page.getByRole('link', { name: 'Health & reports' }).click();
    await page.waitForURL(`${server.url}/collections/home/health`);
    for (const [label, key] of [
      ['Total', 'total'],
      ['Current', 'current'],
      ['Archived', 'archived'],
      ['Supersessions', 'supersessions'],
      ['Needs attention', 'needs_attention'],
    ] as const) {
      await shows(`the ${label} count`, card(page, label).locator('strong'), String(health[key]));
      expect(await card(page, label).locator('strong').innerText()).toBe(String(health[key]));
    }
    expect(await card(page, 'Failed remember extractions').locator('strong').innerText()).toBe('0');
    const pair = page.getByRole('region', { name: 'Contradictions' }).getByRole('row').nth(1);
    await shows('the contradiction', pair, LISBON);
    expect(await pair.innerText()).toContain(PORTO);
    await shows('the summary', page.getByRole('region', { name: 'Summary' }), 'The subject moved from Porto to Lisbon.');
    await shows('the profile', page.getByRole('region', { name: 'Profile' }), 'Lives in Lisbon.');
    await screenshot(page, 'health-1280');
    await page.context().close();
  });

  it('hygiene shows the dedup dry run, changes nothing until confirmed, then deletes the duplicate', { timeout: 120_000 }, async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/dups/hygiene`);
    const before = (await t.api('GET', `${col('dups')}/memories?limit=200`)).body as any[];
    const drop = before.find((m) => m.text === DUP_DROP)!;

    await page.getByRole('button', { name: 'Find duplicates (dry run)' }).click();
    const cluster = page.getByTestId('dedup-cluster');
    await shows('the duplicate cluster', cluster, DUP_DROP);
    expect(await cluster.count()).toBe(1);
    const text = await cluster.innerText();
    expect(text.indexOf('Keeps')).toBeLessThan(text.indexOf(DUP_KEEP));
    expect(text.indexOf(DUP_KEEP)).toBeLessThan(text.indexOf('Deletes'));
    expect(text.indexOf('Deletes')).toBeLessThan(text.indexOf(DUP_DROP));
    expect(text).not.toContain(PARKING);

    // Archive-stale's dry run lists what it would archive and archives nothing.
    await page.getByLabel('Not updated for (days)').fill('0');
    await page.getByRole('button', { name: 'Find stale memories (dry run)' }).click();
    const stale = page.getByRole('region', { name: 'Stale memories', exact: true });
    await shows('the stale dry run', stale, '3 memories not updated for 0 days would be archived');
    for (const x of [DUP_KEEP, DUP_DROP, PARKING]) expect(await stale.innerText()).toContain(x);
    await screenshot(page, 'hygiene-1280');

    // Nothing has changed: not after the dry runs, not with the dialog open, not after Cancel.
    expect(await restTexts('dups')).toEqual([DUP_KEEP, DUP_DROP, PARKING].sort());
    await page.getByRole('button', { name: 'Delete 1 duplicate' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the duplicates?' });
    await dialog.waitFor();
    expect(await restTexts('dups')).toEqual([DUP_KEEP, DUP_DROP, PARKING].sort());
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await restTexts('dups')).toEqual([DUP_KEEP, DUP_DROP, PARKING].sort());
    expect(((await t.api('GET', `${col('dups')}/memories?limit=200&include_archived=true`)).body as any[]).every((m) => !m.archived)).toBe(true);

    await page.getByRole('button', { name: 'Delete 1 duplicate' }).click();
    await dialog.getByRole('button', { name: 'Delete 1 duplicate' }).click();
    await shows('the dedup result', page.getByRole('region', { name: 'Remove duplicates' }).getByRole('status'), 'Deleted 1 duplicate.');
    expect(await restTexts('dups')).toEqual([DUP_KEEP, PARKING].sort());
    expect((await t.api('GET', `${col('dups')}/memories/${drop.id}`)).status).toBe(404);
    await page.context().close();
  });

  it('a read-only key sees the dry runs but no run buttons, and no Remember tab', { timeout: 120_000 }, async () => {
    const reader = await t.newKey('reader', true);
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, reader.key);
    await page.goto(`${server.url}/collections/dups2/hygiene`);
    const tabs = page.getByRole('navigation', { name: 'Collection dups2' });
    await tabs.getByRole('link', { name: 'Hygiene' }).waitFor();
    expect(await tabs.getByRole('link', { name: 'Remember' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Find duplicates (dry run)' }).click();
    await shows('the read-only dedup dry run', page.getByTestId('dedup-cluster'), DUP_DROP);
    await page.getByLabel('Not updated for (days)').fill('0');
    await page.getByRole('button', { name: 'Find stale memories (dry run)' }).click();
    await shows('the read-only stale dry run', page.getByRole('region', { name: 'Stale memories', exact: true }), 'would be archived');
    await page.getByLabel('What to forget').fill('staging server restarts');
    await page.getByRole('button', { name: 'Show matches (dry run)' }).click();
    await shows('the read-only forget preview', page.getByRole('region', { name: 'Forget matches', exact: true }), DUP_KEEP);
    expect(await page.getByRole('button', { name: /^(Delete|Archive|Forget)/ }).count()).toBe(0);
    // The dry runs changed nothing.
    expect(await restTexts('dups2')).toEqual([DUP_KEEP, DUP_DROP].sort());

    await page.goto(`${server.url}/collections/dups2/remember`);
    await page.getByText('This key is read-only').waitFor();
    expect(await page.getByLabel('Text to remember').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Remember' }).count()).toBe(0);
    await page.context().close();
  });

  it('forget shows its matches first and deletes them only when confirmed', { timeout: 120_000 }, async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/dups2/hygiene`);
    await page.getByLabel('What to forget').fill('staging server restarts on Sunday');
    await page.getByLabel('Minimum similarity (0 to 1)').fill('0.6');
    await page.getByRole('button', { name: 'Show matches (dry run)' }).click();
    const matches = page.getByRole('region', { name: 'Forget matches', exact: true });
    await shows('the forget preview', matches, '2 memories at least 0.6 similar');
    expect(await restTexts('dups2')).toEqual([DUP_KEEP, DUP_DROP].sort());
    await page.getByRole('button', { name: 'Forget these memories' }).click();
    await page.getByRole('dialog', { name: 'Forget for good?' }).getByRole('button', { name: 'Forget these memories' }).click();
    await shows('the forget result', page.getByRole('region', { name: 'Forget by meaning' }).getByRole('status'), 'Forgot 2 memories.');
    expect(await restTexts('dups2')).toEqual([]);
    await page.context().close();
  });

  it('the search playground works at phone width', { timeout: 60_000 }, async () => {
    const page = await openPage(browser, 390);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/search?q=${encodeURIComponent('when is lunch')}`);
    await shows('results at 390', page.getByTestId('search-result'), 'Lunch is served at noon');
    // Nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, 'search-390');
    await page.context().close();
  });
});

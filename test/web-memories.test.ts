import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { png } from './support/documents.ts';
import { col, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';
import { postForm } from './support/transports.ts';
import { until } from './support/until.ts';

/**
 * The dashboard's collections, memory list and memory page in real Chromium against a real
 * server: create, add, filter, pin, archive, edit and delete through the UI, checked over REST;
 * images, related memories and supersession history (made by remember with the fake LLM); a
 * read-only key sees no write controls and a restricted collection it is not granted is not listed.
 */
let fake: FakeLlm;
let server: TestServer;
let browser: Browser;
let t: Tenant;

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake, [['Ana lives in Porto.', 'Ana lives in Lisbon.']]);
  server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
  browser = await launchBrowser();
  t = await newTenant(server.url, server.adminKey);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fake?.close();
});

const TOMATOES = 'Tomatoes need full sun and deep watering twice a week.';
const ROSES = 'Roses prefer watering in the early morning.';
const PEPPERS = 'Tomatoes and peppers like warm soil in spring.';

const memoryItems = (page: Page) => page.getByRole('list', { name: 'Memories' }).getByRole('listitem');
const itemTexts = async (page: Page) => (await memoryItems(page).allTextContents()).map((s) => s.trim());
/** Waits until the memory list shows exactly these memories (by the start of their text), in this order. */
const listShows = (page: Page, what: string, texts: string[]) =>
  until(what, async () => {
    if (await page.getByRole('status').filter({ hasText: 'Loading memories' }).count()) return undefined;
    const shown = await itemTexts(page);
    return shown.length === texts.length && texts.every((x, i) => shown[i]!.startsWith(x.slice(0, 30))) ? shown : undefined;
  });
const byText = (memories: any[], text: string) => memories.find((m) => m.text === text);
const restList = async (collection: string, archived = false) =>
  (await t.api('GET', `${col(collection)}/memories?limit=200&include_archived=${archived}`)).body as any[];

describe('web: collections, memories and a memory page', () => {
  it('a writing key creates, adds, filters, pins, archives, edits and deletes through the UI', { timeout: 120_000 }, async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);

    // Create a collection: the page opens it.
    await page.getByLabel('Name').fill('garden');
    await page.getByLabel('Description (optional)').fill('What we know about the garden');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.waitForURL(`${server.url}/collections/garden`);
    await page.getByRole('heading', { name: 'garden', level: 1 }).waitFor();
    const cols = await t.api('GET', '/v1/memory/collections');
    expect(cols.body).toEqual([expect.objectContaining({ name: 'garden', description: 'What we know about the garden', memory_count: 0, restricted: false })]);

    // Add a memory: bad metadata JSON is refused in the form, with its reason.
    // The add form is folded under its summary.
    const add = page.getByRole('form', { name: 'Add memory' });
    expect(await add.isVisible()).toBe(false);
    await page.locator('summary', { hasText: 'Add memory' }).click();
    await add.getByLabel('Text').fill(TOMATOES);
    await add.getByLabel('Importance').fill('0.7');
    await add.getByLabel('Category').fill('fact');
    await add.getByLabel('Container tag').fill('veg');
    await add.getByLabel('Metadata (JSON object, optional)').fill('{"bed": 3');
    await add.getByText('Metadata is not valid JSON').waitFor();
    expect(await add.getByRole('button', { name: 'Add memory' }).isDisabled()).toBe(true);
    await add.getByLabel('Metadata (JSON object, optional)').fill('{"bed": 3, "plot": "north"}');
    await add.getByText('Metadata is not valid JSON').waitFor({ state: 'detached' });
    await add.getByRole('button', { name: 'Add memory' }).click();
    await listShows(page, 'the first memory listed', [TOMATOES]);

    await add.getByLabel('Text').fill(ROSES);
    await add.getByLabel('Importance').fill('0.4');
    await add.getByLabel('Category').fill('preference');
    await add.getByLabel('Container tag').fill('flowers');
    await add.getByRole('button', { name: 'Add memory' }).click();
    await listShows(page, 'both memories, newest first', [ROSES, TOMATOES]);

    let rows = await restList('garden');
    expect(byText(rows, TOMATOES)).toMatchObject({
      importance: 0.7,
      category: 'fact',
      container_tag: 'veg',
      metadata: { bed: 3, plot: 'north' },
      pinned: false,
      archived: false,
    });
    expect(byText(rows, ROSES)).toMatchObject({ importance: 0.4, category: 'preference', container_tag: 'flowers', metadata: {} });
    const tomatoes = byText(rows, TOMATOES).id as string;
    const roses = byText(rows, ROSES).id as string;
    // The row says who made it and what it is.
    const tomatoItem = memoryItems(page).filter({ hasText: TOMATOES });
    expect(await tomatoItem.textContent()).toMatch(/category fact.*importance 0\.7.*tag veg.*by default/);

    // Filters narrow the list.
    const filter = page.getByRole('form', { name: 'Filter memories' });
    await filter.getByLabel('Category').fill('preference');
    await filter.getByRole('button', { name: 'Apply filters' }).click();
    await listShows(page, 'the preference only', [ROSES]);
    expect(page.url()).toContain('category=preference');
    await filter.getByLabel('Category').fill('');
    await filter.getByLabel('Container tag').fill('veg');
    await filter.getByRole('button', { name: 'Apply filters' }).click();
    await listShows(page, 'the veg tag only', [TOMATOES]);
    await filter.getByRole('button', { name: 'Clear' }).click();
    await listShows(page, 'both again', [ROSES, TOMATOES]);

    // Pin the older one: it lists first.
    await tomatoItem.getByRole('button', { name: 'Pin', exact: true }).click();
    await listShows(page, 'the pinned memory first', [TOMATOES, ROSES]);
    expect(await tomatoItem.textContent()).toContain('pinned');
    expect((await t.api('GET', `${col('garden')}/memories/${tomatoes}`)).body.pinned).toBe(true);
    await filter.getByLabel('Pinned').selectOption('yes');
    await filter.getByRole('button', { name: 'Apply filters' }).click();
    await listShows(page, 'the pinned only', [TOMATOES]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await listShows(page, 'both again', [TOMATOES, ROSES]);

    // Archive the other through the confirm dialog: it leaves the default list.
    await memoryItems(page).filter({ hasText: ROSES }).getByRole('button', { name: 'Archive' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('It leaves the default list').waitFor();
    await dialog.getByRole('button', { name: 'Archive' }).click();
    await listShows(page, 'the archived memory gone', [TOMATOES]);
    expect((await t.api('GET', `${col('garden')}/memories/${roses}`)).body.archived).toBe(true);
    expect((await restList('garden')).map((m) => m.id)).toEqual([tomatoes]);
    await filter.getByLabel('Archived').selectOption('only');
    await filter.getByRole('button', { name: 'Apply filters' }).click();
    await listShows(page, 'the archived only', [ROSES]);
    expect(await memoryItems(page).first().getByRole('button', { name: 'Restore' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Clear' }).click();
    await listShows(page, 'the default list', [TOMATOES]);

    // A third memory (over REST) for related, and a PNG attached to the first.
    expect((await t.api('POST', `${col('garden')}/memories`, { text: PEPPERS, category: 'fact' })).status).toBe(201);
    const image = png('Bed 3 plan', { width: 360, fontPx: 32 });
    const attached = await postForm(server.url, t.key, `${col('garden')}/memories/${tomatoes}/images`, {
      files: [{ filename: 'bed3.png', content_type: 'image/png', data: image.toString('base64') }],
    });
    expect(attached.status, JSON.stringify(attached.body)).toBe(201);
    await page.reload();
    await listShows(page, 'pinned first, then newest', [TOMATOES, PEPPERS]);
    await screenshot(page, 'memories-1280');

    // The memory page: text, details, metadata, image preview, related.
    await tomatoItem.getByRole('link').click();
    await page.waitForURL(`${server.url}/collections/garden/memories/${tomatoes}`);
    await page.getByRole('paragraph').filter({ hasText: TOMATOES }).waitFor();
    expect(await page.getByLabel('Metadata', { exact: true }).textContent()).toBe(JSON.stringify({ bed: 3, plot: 'north' }, null, 2));
    const details = await page.locator('dl').textContent();
    expect(details).toContain('Container tagveg');
    expect(details).toContain('Created bydefault');
    expect(details).toContain('Pinnedyes');
    const preview = page.getByRole('region', { name: 'Images and files' }).locator('img');
    await preview.waitFor();
    await until('the image preview to load', async () =>
      (await preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)) === 360 ? true : undefined,
    );
    expect(await page.getByText('bed3.png').count()).toBe(1);
    const related = page.getByRole('list', { name: 'Related memories' });
    await related.waitFor();
    // Archived memories are never related; the third one is.
    expect(await related.getByRole('listitem').allTextContents()).toEqual([expect.stringMatching(new RegExp(`^${PEPPERS} score \\d\\.\\d\\d · fact$`))]);
    await page.getByText('Nothing has superseded this memory.').waitFor();
    await screenshot(page, 'memory-1280');

    // Edit: only the changed fields are sent; the page shows the saved memory.
    const edit = page.getByRole('form', { name: 'Edit' });
    await edit.getByLabel('Importance').fill('0.9');
    await edit.getByLabel('Category').fill('plan');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await until('the saved details', async () => ((await page.locator('dl').textContent())?.includes('Importance0.9Categoryplan') ? true : undefined));
    expect((await t.api('GET', `${col('garden')}/memories/${tomatoes}`)).body).toMatchObject({ importance: 0.9, category: 'plan', text: TOMATOES });

    // Unpin from the memory page.
    await page.getByRole('button', { name: 'Unpin' }).click();
    await page.getByRole('button', { name: 'Pin', exact: true }).waitFor();
    expect((await t.api('GET', `${col('garden')}/memories/${tomatoes}`)).body.pinned).toBe(false);

    // Related links lead to the other memory; delete that one through the confirm dialog.
    await related.getByRole('link').click();
    await page.getByRole('paragraph').filter({ hasText: PEPPERS }).waitFor();
    const peppers = page.url().split('/').at(-1)!;
    await page.getByRole('button', { name: 'Delete memory' }).click();
    await page.getByRole('dialog').getByText('deleted for good').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(`${server.url}/collections/garden`);
    await listShows(page, 'the deleted memory gone', [TOMATOES]);
    expect((await t.api('GET', `${col('garden')}/memories/${peppers}`)).status).toBe(404);

    // Collections: the card counts what the list shows (the archived one apart).
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Collections' }).click();
    const garden = page.getByRole('list', { name: 'Collections' }).getByRole('listitem').filter({ hasText: 'garden' });
    await garden.waitFor();
    expect(await garden.getByRole('paragraph').first().textContent()).toBe('1 memory · 1 archived');
    expect(await garden.textContent()).toContain('What we know about the garden');
    await page.context().close();
  });

  for (const width of [1280, 390] as const) {
    it(`a collection card at ${width} pixels: the count its list shows, archived ones apart, its link its one action; deleted from its own page`, async () => {
      const name = `shelf-${width}`;
      const made = await t.api(
        'POST',
        `${col(name)}/memories/bulk`,
        ['one', 'two', 'three', 'four', 'five'].map((text) => ({ text: `Book ${text}.` })),
      );
      for (const id of made.body.ids.slice(0, 2)) expect((await t.api('POST', `${col(name)}/memories/${id}/archive`, { archived: true })).status).toBe(200);
      const page = await openPage(browser, width);
      await signIn(page, server.url, t.key);
      const card = page.getByRole('list', { name: 'Collections' }).getByRole('listitem').filter({ hasText: name });
      await card.waitFor();
      expect(await card.getByRole('paragraph').first().textContent()).toBe('3 memories · 2 archived');
      // The card's one control is its link: no delete button beside it.
      expect(await card.locator('a, button, input, select, textarea').evaluateAll((els) => els.map((e) => `${e.tagName} ${e.textContent}`))).toEqual([
        `A ${name}`,
      ]);
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
      await screenshot(page, `collections-${width}`);

      // Its list shows as many as the card said.
      await card.getByRole('link', { name }).click();
      await page.waitForURL(`${server.url}/collections/${name}`);
      await listShows(page, 'the three memories not archived', ['Book five.', 'Book four.', 'Book three.']);

      // Deleted from its page, through the dialog that says what goes with it; Cancel keeps it.
      const remove = page.getByRole('button', { name: 'Delete collection' });
      await remove.click();
      const dialog = page.getByRole('dialog');
      expect(await dialog.getByRole('paragraph').textContent()).toBe(
        'This deletes the collection with its 3 memories and 2 archived, and their files. It cannot be undone.',
      );
      await screenshot(page, `collection-delete-${width}`);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await t.api('GET', col(name))).status).toBe(200);
      await remove.click();
      await dialog.getByRole('button', { name: 'Delete collection' }).click();
      await page.waitForURL(`${server.url}/collections`);
      await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
      await page.getByRole('list', { name: 'Collections' }).getByRole('listitem').first().waitFor();
      expect(await card.count()).toBe(0);
      expect((await t.api('GET', col(name))).status).toBe(404);
      await page.context().close();
    });
  }

  it('pages through a long list, with and without browser-side filters', async () => {
    const items = Array.from({ length: 23 }, (_, i) => ({ text: `Note number ${String(i + 1).padStart(2, '0')}.`, category: i % 2 ? 'even' : 'odd' }));
    expect((await t.api('POST', `${col('many')}/memories/bulk`, items)).status).toBe(201);
    const order = (await restList('many')).map((m) => m.text as string);
    const odd = (await restList('many')).filter((m) => m.category === 'odd').map((m) => m.text as string);
    expect(odd).toHaveLength(12);

    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/many`);
    const filter = page.getByRole('form', { name: 'Filter memories' });
    await filter.getByLabel('Per page').selectOption('10');
    await filter.getByRole('button', { name: 'Apply filters' }).click();
    const pages = page.getByRole('navigation', { name: 'Pages' });
    await listShows(page, 'page 1', order.slice(0, 10));
    expect(await pages.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
    await pages.getByRole('button', { name: 'Next' }).click();
    await listShows(page, 'page 2', order.slice(10, 20));
    await pages.getByRole('button', { name: 'Next' }).click();
    await listShows(page, 'page 3', order.slice(20));
    expect(await pages.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await pages.getByRole('button', { name: 'Previous' }).click();
    await listShows(page, 'page 2 again', order.slice(10, 20));

    // The list API filters by category; paging goes on over the matches.
    await filter.getByLabel('Category').fill('odd');
    await filter.getByRole('button', { name: 'Apply filters' }).click();
    await listShows(page, 'odd page 1', odd.slice(0, 10));
    await pages.getByRole('button', { name: 'Next' }).click();
    await listShows(page, 'odd page 2', odd.slice(10));
    expect(await pages.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await page.context().close();
  });

  it('a memory page shows the facts it superseded and the one that superseded it (remember with the fake LLM)', async () => {
    const lisbon = (await rememberSync(t, 'people', 'Ana lives in Lisbon.')).body.memories[0].id as string;
    const porto = await rememberSync(t, 'people', 'Ana lives in Porto.');
    expect(porto.body.memories[0]).toMatchObject({ relation: 'supersedes', supersedes_id: lisbon });

    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/people/memories/${lisbon}`);
    const history = page.getByRole('region', { name: 'Supersession history' });
    await history.getByText('This fact was replaced on').waitFor();
    expect(await history.textContent()).toContain('by Ana lives in Porto.');
    await history.getByRole('link', { name: 'Ana lives in Porto.' }).click();
    await page.waitForURL(`${server.url}/collections/people/memories/${porto.body.memories[0].id}`);
    await history.getByRole('heading', { name: 'Facts it superseded' }).waitFor();
    expect(await history.getByRole('listitem').textContent()).toMatch(/^Ana lives in Lisbon\. \(held .+ until .+; stored .+, superseded .+\) superseded$/);
    expect(await history.getByText('Nothing has superseded this memory.').count()).toBe(1);
    await page.context().close();
  });

  it('a read-only key sees no write controls, and not a restricted collection it is not granted', async () => {
    const reader = await t.newKey('reader', true);
    const owner = await t.newKey('owner');
    expect((await t.api('POST', '/v1/memory/collections', { name: 'secret', description: 'Owner only' })).status).toBe(201);
    expect((await t.api('PUT', '/v1/memory/collections/secret/grants', { agent_key_id: owner.id, can_read: true, can_write: true })).status).toBe(200);
    // Over REST: the reader does not see it, the granted key does, marked restricted.
    const forReader = await t.api('GET', '/v1/memory/collections', undefined, reader.key);
    expect(forReader.body.map((c: any) => c.name).sort()).toEqual(['garden', 'many', 'people']);
    const forOwner = await t.api('GET', '/v1/memory/collections', undefined, owner.key);
    expect(forOwner.body.find((c: any) => c.name === 'secret')).toMatchObject({ restricted: true });

    // The granted key sees it with its badge.
    const ownerPage = await openPage(browser, 1280);
    await signIn(ownerPage, server.url, owner.key);
    const secretCard = ownerPage.getByRole('list', { name: 'Collections' }).getByRole('listitem').filter({ hasText: 'secret' });
    await secretCard.waitFor();
    expect(await secretCard.textContent()).toContain('restricted');
    await ownerPage.context().close();

    const page = await openPage(browser, 390);
    await signIn(page, server.url, reader.key);
    const cards = page.getByRole('list', { name: 'Collections' }).getByRole('listitem');
    await until('the readable collections', async () => ((await cards.count()) === 3 ? true : undefined));
    expect((await cards.allTextContents()).join(' ')).not.toContain('secret');
    const writeButton = /^(Create collection|Delete.*|Add memory|Pin|Unpin|Archive|Restore|Save changes|Retract|Undo retraction)$/;
    const noWriteControls = async () => {
      expect(await page.getByRole('button', { name: writeButton }).allTextContents()).toEqual([]);
      expect(await page.getByRole('form').count()).toBe(page.url().endsWith('/garden') ? 1 : 0); // only the filters
      expect(await page.getByRole('textbox', { name: 'Text' }).count()).toBe(0);
    };
    await noWriteControls();

    await cards.filter({ hasText: 'garden' }).getByRole('link').click();
    await page.waitForURL(`${server.url}/collections/garden`);
    await listShows(page, 'the reader sees the memories', [TOMATOES]);
    await noWriteControls();
    await screenshot(page, 'memories-390');

    await memoryItems(page).first().getByRole('link').click();
    await page.getByRole('paragraph').filter({ hasText: TOMATOES }).waitFor();
    await page.getByRole('region', { name: 'Related memories' }).waitFor();
    await page.getByText('Nothing has superseded this memory.').waitFor();
    await noWriteControls();
    // The restricted collection cannot be opened either: its error detail is shown.
    const denied = await t.api('GET', `${col('secret')}/memories`, undefined, reader.key);
    expect(denied.status).toBe(403);
    await page.goto(`${server.url}/collections/secret`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toBe(denied.body.detail);
    await page.context().close();
  });
});

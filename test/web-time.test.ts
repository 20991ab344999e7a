import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { launchBrowser, openPage, screenshot, signIn } from './support/browser.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { pdf } from './support/documents.ts';
import { col } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';
import { postForm } from './support/transports.ts';
import { until } from './support/until.ts';

/**
 * The dashboard's view of time and provenance (docs/time.md) in real Chromium against a real
 * server: a memory's times, where it came from with links that open the source, retraction and
 * its undo, the supersession history both ways (remember with the fake LLM), and search as of a
 * moment; a read-only key sees the times but no retract control.
 */
let fake: FakeLlm;
let server: TestServer;
let browser: Browser;
let t: Tenant;

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake, [
    ['Lea lives in Oslo.', 'Lea lives in Bergen.'],
    ['Lea lives in Tromso.', 'Lea lives in Oslo.'],
  ]);
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
  browser = await launchBrowser();
  t = await newTenant(server.url, server.adminKey);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fake?.close();
});

const memoryUrl = (collection: string, id: string) => `${server.url}/collections/${collection}/memories/${id}`;
/** The value shown for a term of the memory's details list. */
const detail = (page: Page, term: string) => page.locator('dl dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]');
/** An ISO moment as the page shows it: the reader's local time, as the dashboard formats it. */
const shown = (page: Page, iso: string) => page.evaluate((s) => new Date(s).toLocaleString(), iso);
const rest = async (collection: string, id: string) => (await t.api('GET', `${col(collection)}/memories/${id}`)).body;

describe('web: when and where from', () => {
  it('shows a memory’s times and opens its sources: the file, the raw text of a remember, the connection and its record', { timeout: 120_000 }, async () => {
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);

    // Times given on create are shown as the reader's local time.
    const given = await t.api('POST', `${col('times')}/memories`, {
      text: 'The lease of the Bergen flat ran for two years.',
      observed_at: '2022-03-01T09:00:00Z',
      valid_from: '2021-01-01T00:00:00Z',
      valid_to: '2023-01-01T00:00:00Z',
    });
    expect(given.status).toBe(201);
    await page.goto(memoryUrl('times', given.body.id));
    await detail(page, 'Observed').waitFor();
    expect(await detail(page, 'Observed').innerText()).toBe(await shown(page, '2022-03-01T09:00:00Z'));
    expect(await detail(page, 'Holds').innerText()).toBe(`${await shown(page, '2021-01-01T00:00:00Z')} until ${await shown(page, '2023-01-01T00:00:00Z')}`);
    expect(await detail(page, 'Recorded').innerText()).toBe(await shown(page, given.body.created_at));
    expect(await page.getByTestId('memory-state').first().innerText()).toBe('ended');
    expect(await page.getByTestId('provenance-kind').innerText()).toBe('api Written through the API');

    // A file: the link opens the stored file itself.
    const dropped = await postForm(server.url, t.key, `${col('files')}/drop`, {
      files: [{ filename: 'notes.txt', content_type: 'text/plain', data: Buffer.from('Lea keeps the spare key under the mat.').toString('base64') }],
    });
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(201);
    const chunk = dropped.body.files[0].memory_ids[0] as string;
    await page.goto(memoryUrl('files', chunk));
    const source = page.getByRole('list', { name: 'Source' });
    const fileLink = source.getByRole('link', { name: 'notes.txt' });
    await fileLink.waitFor();
    expect(await source.innerText()).toContain('part 1');
    const opened = await fetch(new URL((await fileLink.getAttribute('href'))!, server.url));
    expect(opened.status).toBe(200);
    expect(await opened.text()).toBe('Lea keeps the spare key under the mat.');

    // A remembered fact: the link opens the raw text it was extracted from.
    const remembered = await t.api('POST', `${col('people')}/remember?sync=true`, { content: 'Lea lives in Bergen.', observed_at: '2020-01-01T00:00:00Z' });
    expect(remembered.status).toBe(200);
    const fact = remembered.body.memories[0].id as string;
    const raw = (await rest('people', fact)).provenance.memory_id as string;
    expect(raw).not.toBe(fact);
    await page.goto(memoryUrl('people', fact));
    await source.getByRole('link', { name: 'The text it was remembered from' }).click();
    await page.waitForURL(memoryUrl('people', raw));
    await page.getByText('This is the text remember was given.').waitFor();

    // A connector page: the connection in the dashboard and the record at the provider; a script address is never a link.
    const synced = await t.api('POST', `${col('crm')}/memories/bulk`, [
      { text: 'Lea signed the renewal.', metadata: { connection_id: 'c-123', record_id: 'r-9', url: 'https://crm.example/records/r-9' } },
      { text: 'Lea asked for a call.', metadata: { connection_id: 'c-123', record_id: 'r-10', url: 'javascript:alert(1)' } },
    ]);
    expect(synced.status).toBe(201);
    await page.goto(memoryUrl('crm', synced.body.ids[0]));
    await source.getByRole('link', { name: 'The connection' }).waitFor();
    expect(await source.getByRole('link', { name: 'The connection' }).getAttribute('href')).toBe('/connections#conn-c-123');
    expect(await source.getByRole('link', { name: 'The record at the provider' }).getAttribute('href')).toBe('https://crm.example/records/r-9');
    expect(await source.innerText()).toContain('record r-9');
    await screenshot(page, 'memory-provenance-1280');
    await page.goto(memoryUrl('crm', synced.body.ids[1]));
    await source.getByRole('link', { name: 'The connection' }).waitFor();
    expect(await source.getByRole('link', { name: 'The record at the provider' }).count()).toBe(0);
    await page.context().close();
  });

  it('retracts a memory as ended (with its moment and reason) or as wrong, and undoes it', { timeout: 120_000 }, async () => {
    const created = await t.api('POST', `${col('jobs')}/memories`, { text: 'Lea works at the harbour office.', valid_from: '2020-01-01T00:00:00Z' });
    const id = created.body.id as string;
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(memoryUrl('jobs', id));
    const form = page.getByRole('form', { name: 'Retract' });
    await form.getByLabel('It stopped being true').check();
    await form.getByLabel('Ended at (optional, now when empty)').fill('2024-05-01T12:00');
    await form.getByLabel('Reason (optional)').fill('changed jobs');
    await form.getByRole('button', { name: 'Retract' }).click();
    await page.getByRole('button', { name: 'Undo retraction' }).waitFor();
    const at = await page.evaluate(() => new Date('2024-05-01T12:00').toISOString());
    const ended = await rest('jobs', id);
    expect(ended).toMatchObject({ valid_to: at, retraction: { how: 'ended', at, reason: 'changed jobs' } });
    await until('the retraction shown', async () => ((await page.getByTestId('memory-state').first().innerText()) === 'retracted: ended' ? true : undefined));
    expect(await detail(page, 'Retracted').innerText()).toMatch(/^ended .+ \(recorded .+\): changed jobs$/);
    await screenshot(page, 'memory-retracted-1280');

    // Undo: the memory holds again as before.
    await page.getByRole('button', { name: 'Undo retraction' }).click();
    await form.waitFor();
    expect(await rest('jobs', id)).toMatchObject({ valid_to: null, retraction: null });
    expect(await page.getByTestId('memory-state').first().innerText()).toBe('current');

    // Wrong: no moment is asked for, and none is sent.
    await form.getByLabel('It was never true').check();
    expect(await form.getByLabel('Ended at (optional, now when empty)').count()).toBe(0);
    await form.getByRole('button', { name: 'Retract' }).click();
    await page.getByRole('button', { name: 'Undo retraction' }).waitFor();
    expect(await rest('jobs', id)).toMatchObject({ valid_to: null, retraction: { how: 'wrong', at: null, reason: null } });

    // A refusal shows the service's detail: a moment before the memory began.
    await page.getByRole('button', { name: 'Undo retraction' }).click();
    await form.getByLabel('Ended at (optional, now when empty)').fill('2019-01-01T00:00');
    await form.getByRole('button', { name: 'Retract' }).click();
    await page.getByRole('alert').filter({ hasText: "later than the memory's valid_from" }).waitFor();
    expect((await rest('jobs', id)).retraction).toBeNull();
    await page.context().close();
  });

  it('shows the supersession history both ways, and a read-only key sees no retract control', { timeout: 120_000 }, async () => {
    const ids: string[] = [];
    for (const [city, at] of [
      ['Bergen', '2020-01-01T00:00:00Z'],
      ['Oslo', '2021-01-01T00:00:00Z'],
      ['Tromso', '2022-01-01T00:00:00Z'],
    ] as const) {
      const res = await t.api('POST', `${col('moves')}/remember?sync=true`, { content: `Lea lives in ${city}.`, observed_at: at });
      expect(res.status).toBe(200);
      ids.push(res.body.memories[0].id);
    }
    const [bergen, oslo, tromso] = ids as [string, string, string];
    const reader = await t.newKey('reader', true);
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, reader.key);

    const history = page.getByRole('region', { name: 'Supersession history' });
    await page.goto(memoryUrl('moves', bergen));
    await history.getByText('This fact was replaced on').waitFor();
    expect(await history.getByRole('link').first().innerText()).toBe('Lea lives in Oslo.');
    const later = history.getByRole('list', { name: 'Later versions' }).getByRole('listitem');
    expect(await later.allInnerTexts()).toEqual([
      expect.stringMatching(/^Lea lives in Oslo\. \(held .+ until .+; stored .+, superseded .+\) superseded$/),
      expect.stringMatching(/^Lea lives in Tromso\. \(held .+, still open; stored .+; 2 steps away\) current$/),
    ]);
    await page.getByText('It superseded no other fact.').waitFor();

    // The newest: what it superseded, directly and through the one before.
    await later.nth(1).getByRole('link').click();
    await page.waitForURL(memoryUrl('moves', tromso));
    const older = history.getByRole('list', { name: 'Facts it superseded' });
    await older.waitFor();
    expect(await older.getByRole('link').allInnerTexts()).toEqual(['Lea lives in Oslo.', 'Lea lives in Bergen.']);
    expect(await older.getByRole('link').first().getAttribute('href')).toBe(`/collections/moves/memories/${oslo}`);
    await history.getByText('Nothing has superseded this memory.').waitFor();
    await screenshot(page, 'memory-history-1280');

    // The reader sees times and provenance, not the retract form or its undo.
    await detail(page, 'Observed').waitFor();
    await page.getByTestId('provenance-kind').waitFor();
    expect(await page.getByRole('form', { name: 'Retract' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Retract|Undo retraction/ }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Retraction' }).count()).toBe(0);
    await page.context().close();
  });

  it('searches as of a moment: what held then, with the moment in the address and the request', { timeout: 120_000 }, async () => {
    const bulk = await t.api('POST', `${col('office')}/memories/bulk`, [
      { text: 'The team office is on Pier 4.', observed_at: '2019-12-15T00:00:00Z', valid_from: '2020-01-01T00:00:00Z', valid_to: '2022-01-01T00:00:00Z' },
      { text: 'The team office is on Pier 9.', valid_from: '2022-01-01T00:00:00Z' },
    ]);
    expect(bulk.status).toBe(201);
    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/search`);
    await page.getByLabel('Query', { exact: true }).fill('team office pier');
    await page.getByLabel('Collection').selectOption('office');
    await page.getByLabel('Mode').selectOption('text');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.getByTestId('search-result');
    const texts = async () => (await results.getByRole('link').allInnerTexts()).filter((s) => s.startsWith('The team office'));
    await until('the current result', async () => ((await texts()).length ? await texts() : undefined));
    expect(await texts()).toEqual(['The team office is on Pier 9.']);
    expect(await results.first().innerText()).toContain('from api');

    await page.getByLabel('As of (empty: what holds now)').fill('2021-06-01T12:00:00');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/as_of=2021-06-01T12%3A00/);
    await until('the result as of 2021', async () => ((await texts())[0] === 'The team office is on Pier 4.' ? true : undefined));
    expect(await texts()).toEqual(['The team office is on Pier 4.']);
    const times = await results.first().getByTestId('result-times').innerText();
    expect(times).toBe(
      `observed ${await shown(page, '2019-12-15T00:00:00Z')} · holds ${await shown(page, '2020-01-01T00:00:00Z')} until ${await shown(page, '2022-01-01T00:00:00Z')}`,
    );
    await page.getByText('Request: POST /v1/memory/collections/office/search').click();
    const sent = JSON.parse(await page.locator('details pre').innerText());
    expect(sent.as_of).toBe(await page.evaluate(() => new Date('2021-06-01T12:00:00').toISOString()));
    await screenshot(page, 'search-as-of-1280');
    await page.context().close();
  });

  it(
    'a PDF’s part names its pages, and its link opens the file at the first; a deck’s names its slides, a workbook’s its sheets',
    { timeout: 120_000 },
    async () => {
      // pdf() draws 40 lines a page: the first page (about 1,750 characters) is a part alone, the second and the short third make one.
      const pad = (i: number) => String(i).padStart(2, '0');
      const lines = [
        ...Array.from({ length: 40 }, (_, i) => `Line ${pad(i)} of the ferry timetable at the pier.`),
        ...Array.from({ length: 40 }, (_, i) => `Page two, line ${pad(i)}.`),
        'Page three.',
      ];
      const dropped = await postForm(server.url, t.key, `${col('pdfs')}/drop`, {
        files: [{ filename: 'timetable.pdf', content_type: 'application/pdf', data: (await pdf(lines)).toString('base64') }],
      });
      expect(dropped.body.files[0], JSON.stringify(dropped.body)).toMatchObject({ status: 'stored', chunks: 2 });
      const [first, second] = dropped.body.files[0].memory_ids as [string, string];
      const page = await openPage(browser, 1280);
      await signIn(page, server.url, t.key);
      const source = page.getByRole('list', { name: 'Source' });
      await page.goto(memoryUrl('pdfs', second));
      await source.getByRole('link', { name: 'timetable.pdf' }).waitFor();
      expect(await source.innerText()).toContain('part 2 · pages 2–3');
      expect(await source.getByRole('link', { name: 'timetable.pdf' }).getAttribute('href')).toMatch(/#page=2$/);
      await page.goto(memoryUrl('pdfs', first));
      await source.getByText('part 1 · page 1').waitFor();
      expect(await source.getByRole('link', { name: 'timetable.pdf' }).getAttribute('href')).toMatch(/#page=1$/);
      // A deck's part names its slides; only a PDF's link names a page.
      const deck = await t.api('POST', `${col('pdfs')}/memories`, {
        text: 'The ferry slides.',
        metadata: { key: `${t.id}/pdfs/01900000-0000-7000-8000-000000000000/deck.pptx`, file: 'deck.pptx', chunk: 2, slide: 2, last_slide: 3 },
      });
      await page.goto(memoryUrl('pdfs', deck.body.id));
      await source.getByText('part 2 · slides 2–3').waitFor();
      expect(await source.getByRole('link', { name: 'deck.pptx' }).getAttribute('href')).not.toContain('#');
      const book = await t.api('POST', `${col('pdfs')}/memories`, {
        text: 'The ferry sheets.',
        metadata: { key: `${t.id}/pdfs/01900000-0000-7000-8000-000000000000/port.xlsx`, file: 'port.xlsx', chunk: 1, sheet: 'Tide table' },
      });
      await page.goto(memoryUrl('pdfs', book.body.id));
      await source.getByText('part 1 · sheet Tide table').waitFor();
      await page.context().close();
    },
  );

  it('the health page lists the retractions, latest first, and undoes one; a reader sees the list without undo', { timeout: 120_000 }, async () => {
    const made = await t.api('POST', `${col('fixes')}/memories/bulk`, [
      { text: 'Lea works at the harbour office.', valid_from: '2020-01-01T00:00:00Z' },
      { text: 'Lea owns a red kayak.' },
      { text: 'Lea likes sailing.' },
    ]);
    expect(made.status).toBe(201);
    const [office, kayak] = made.body.ids as [string, string];
    const retract = (id: string, body: Record<string, unknown>) => t.api('POST', `${col('fixes')}/memories/${id}/retract`, body);
    expect((await retract(office, { how: 'ended', at: '2024-05-01T00:00:00Z', reason: 'changed jobs' })).status).toBe(200);
    expect((await retract(kayak, { how: 'wrong', reason: 'it was her brother’s' })).status).toBe(200);

    const page = await openPage(browser, 1280);
    await signIn(page, server.url, t.key);
    await page.goto(`${server.url}/collections/fixes/health`);
    const report = page.getByRole('region', { name: 'Retractions' });
    const rows = report.getByRole('row');
    await rows.nth(2).waitFor();
    expect(await rows.count()).toBe(3);
    expect(await report.locator('caption').innerText()).toMatch(/^2 retracted memories;/);
    // The latest retraction first, each with how, when it ended, why and when it was retracted.
    const kayakRow = await rows.nth(1).innerText();
    expect(kayakRow).toContain('Lea owns a red kayak.');
    expect(kayakRow).toContain('It was never true');
    expect(kayakRow).toContain('it was her brother’s');
    const officeRow = await rows.nth(2).innerText();
    expect(officeRow).toContain('It stopped being true');
    expect(officeRow).toContain(`ended ${await shown(page, '2024-05-01T00:00:00Z')}`);
    expect(officeRow).toContain('changed jobs');
    expect(await rows.nth(2).getByRole('link').getAttribute('href')).toBe(`/collections/fixes/memories/${office}`);
    await screenshot(page, 'retractions-1280');

    // Undo takes it off the list and the memory holds again as before.
    await report.getByRole('button', { name: 'Undo the retraction of: Lea owns a red kayak.' }).click();
    await until('the undone retraction off the list', async () => ((await rows.count()) === 2 ? true : undefined));
    expect(await rows.nth(1).innerText()).toContain('Lea works at the harbour office.');
    expect(await rest('fixes', kayak)).toMatchObject({ retraction: null, valid_to: null });
    expect((await rest('fixes', office)).retraction).toMatchObject({ how: 'ended' });
    await page.context().close();

    // A reader sees the report at phone width, without the undo column.
    const reader = await t.newKey('fixes-reader', true);
    const phone = await openPage(browser, 390);
    await signIn(phone, server.url, reader.key);
    await phone.goto(`${server.url}/collections/fixes/health`);
    const readerReport = phone.getByRole('region', { name: 'Retractions' });
    await readerReport.getByRole('row').nth(1).waitFor();
    expect(await readerReport.getByRole('button').count()).toBe(0);
    expect(await readerReport.getByRole('columnheader').allInnerTexts()).toEqual(['Memory', 'How', 'Reason', 'Retracted']);
    await screenshot(phone, 'retractions-390');

    // A collection without retractions says so.
    await phone.goto(`${server.url}/collections/pdfs/health`);
    await phone.getByText('No memory has been retracted.').waitFor();
    await phone.context().close();
  });
});

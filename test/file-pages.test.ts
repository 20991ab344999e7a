import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type Tenant } from './support/client.ts';
import { pdf, pptx, xlsx } from './support/documents.ts';
import { startServer, type TestServer } from './support/server.ts';
import { mcpClient, postForm, trpcClient, type JsonFile } from './support/transports.ts';

/**
 * A PDF's pages (and a deck's slides) in the provenance of the memories read from it (docs/time.md,
 * "Provenance"): a real four-page PDF dropped and uploaded as a folder, its hits found by search
 * on REST, tRPC and MCP; a real deck dropped. pdf() draws 40 lines a page; at about 40 characters a line a page is some 1,600
 * characters, so pages 1 and 2 are a chunk each and the short page 4 joins page 3 in the third.
 */
const line = (i: number, words = 'says nothing of note at all') => `Line ${String(i).padStart(3, '0')} ${words}.`;
const lines = Array.from({ length: 123 }, (_, i) => line(i));
lines[10] = line(10, 'the lighthouse keeper retires');
lines[55] = line(55, 'the harbour dredging starts');
lines[121] = line(121, 'the night ferry is cancelled');

let server: TestServer;
let t: Tenant;
let file: JsonFile;
const C = (collection: string) => `/v1/memory/collections/${collection}`;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  t = await newTenant(server.url, server.adminKey);
  file = { filename: 'annual.pdf', content_type: 'application/pdf', data: (await pdf(lines)).toString('base64') };
});
afterAll(async () => {
  await server?.close();
});

type Hit = { text: string; provenance: Record<string, unknown> };
const hitFor = (results: Hit[], word: string) => results.find((r) => r.text.includes(word))?.provenance;
const search = async (query: string) => {
  const res = await t.api('POST', `${C('reports')}/search`, { query, mode: 'text', min_score: 0 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results as Hit[];
};

describe('a PDF read into memories', () => {
  let key: string;

  beforeAll(async () => {
    const res = await postForm(server.url, t.key, `${C('reports')}/drop`, { files: [file] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.files[0]).toMatchObject({ status: 'stored', chunks: 3 });
    key = res.body.files[0].key;
  });

  it('names the page each hit is on, and both ends of a chunk that runs over two', async () => {
    const base = { kind: 'file', file_key: key, file_name: 'annual.pdf' };
    expect(hitFor(await search('lighthouse keeper'), 'lighthouse')).toEqual({ ...base, chunk: 1, page: 1 });
    expect(hitFor(await search('harbour dredging'), 'harbour')).toEqual({ ...base, chunk: 2, page: 2 });
    expect(hitFor(await search('night ferry'), 'ferry')).toEqual({ ...base, chunk: 3, page: 3, last_page: 4 });
  });

  it('gives the same pages over tRPC and MCP, and on the memory itself', async () => {
    const rpc = await trpcClient(server.url, t.key).search.collection.query({ collection: 'reports', query: 'harbour dredging', mode: 'text', min_score: 0 });
    expect(hitFor(rpc.results, 'harbour')).toMatchObject({ kind: 'file', chunk: 2, page: 2 });
    const mcp = await mcpClient(server.url, t.key);
    try {
      const tool = await mcp.callTool({ name: 'search_memory', arguments: { collection: 'reports', query: 'night ferry', mode: 'text', min_score: 0 } });
      expect(tool.isError, JSON.stringify(tool.content)).toBeFalsy();
      expect(hitFor((tool.structuredContent as { results: Hit[] }).results, 'ferry')).toMatchObject({ kind: 'file', chunk: 3, page: 3, last_page: 4 });
    } finally {
      await mcp.close();
    }
    const [ferry] = (await search('night ferry')) as Array<Hit & { id: string }>;
    const memory = await t.api('GET', `${C('reports')}/memories/${ferry!.id}`);
    expect(memory.body.metadata).toMatchObject({ chunk: 3, chunks: 3, page: 3, last_page: 4 });
    expect(memory.body.provenance).toMatchObject({ page: 3, last_page: 4, file_url: expect.stringContaining('/v1/blobs/') });
  });

  it('a folder upload makes one memory of the first pages and says which they are', async () => {
    const res = await postForm(server.url, t.key, `${C('folder')}/memories/folder`, { files: [file] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const memory = await t.api('GET', `${C('folder')}/memories/${res.body.memories[0].id}`);
    expect(memory.body.provenance).toMatchObject({ kind: 'file', file_name: 'annual.pdf', page: 1, last_page: 4 });
  });

  it('a deck names the slides each hit is on, by their numbers in the deck', async () => {
    // A deck's slides are joined by line breaks: 40 lines of 49 characters (1,999 with the breaks) fill slide 1's chunk, slide 2 has
    // no text, and slides 3 and 4 make the second chunk.
    const long = Array.from({ length: 40 }, (_, i) => `Slide one, line ${String(i).padStart(2, '0')}: the pier budget.`.padEnd(49, '.'));
    const deck = await pptx([long, [], ['The ferry schedule changes in May.'], ['The crane is repainted.']]);
    const res = await postForm(server.url, t.key, `${C('decks')}/drop`, {
      files: [{ filename: 'plan.pptx', content_type: '', data: deck.toString('base64') }],
    });
    expect(res.body.files[0], JSON.stringify(res.body)).toMatchObject({ status: 'stored', chunks: 2 });
    const found = await t.api('POST', `${C('decks')}/search`, { query: 'ferry schedule', mode: 'text', min_score: 0 });
    expect(hitFor(found.body.results, 'ferry')).toEqual({
      kind: 'file',
      file_key: res.body.files[0].key,
      file_name: 'plan.pptx',
      chunk: 2,
      slide: 3,
      last_slide: 4,
    });
    const budget = await t.api('POST', `${C('decks')}/search`, { query: 'pier budget', mode: 'text', min_score: 0 });
    expect(hitFor(budget.body.results, 'line 00')).toMatchObject({ chunk: 1, slide: 1 });
    expect(hitFor(budget.body.results, 'line 00')).not.toHaveProperty('page');
  });

  it("a workbook names the sheets each hit is on, by the workbook's names for them", async () => {
    // A workbook's cells are joined by line breaks: 40 rows of 49 characters fill the first sheet's chunk; the two
    // short sheets make the second.
    const rows = Array.from({ length: 40 }, (_, i) => [`Row ${String(i).padStart(2, '0')} of the quay ledger: dues paid.`.padEnd(49, '.')]);
    const book = await xlsx({ Ledger: rows, 'Tide table': [['High water at the quay is at 06:40.']], Crew: [['The pilot boat crew changes in June.']] });
    const res = await postForm(server.url, t.key, `${C('books')}/drop`, {
      files: [{ filename: 'port.xlsx', content_type: '', data: book.toString('base64') }],
    });
    expect(res.body.files[0], JSON.stringify(res.body)).toMatchObject({ status: 'stored', chunks: 2 });
    const found = await t.api('POST', `${C('books')}/search`, { query: 'pilot boat crew', mode: 'text', min_score: 0 });
    expect(hitFor(found.body.results, 'pilot')).toEqual({
      kind: 'file',
      file_key: res.body.files[0].key,
      file_name: 'port.xlsx',
      chunk: 2,
      sheet: 'Tide table',
      last_sheet: 'Crew',
    });
    const ledger = await t.api('POST', `${C('books')}/search`, { query: 'quay ledger dues', mode: 'text', min_score: 0 });
    expect(hitFor(ledger.body.results, 'Row 00')).toMatchObject({ chunk: 1, sheet: 'Ledger' });
    expect(hitFor(ledger.body.results, 'Row 00')).not.toHaveProperty('last_sheet');
  });

  it('a file that has no pages names none, and a page a client wrote that is not a whole number (or a sheet that is no name) is left out', async () => {
    const text = await postForm(server.url, t.key, `${C('plain')}/drop`, {
      files: [{ filename: 'notes.txt', content_type: 'text/plain', data: Buffer.from('The pilot boat is orange.').toString('base64') }],
    });
    const [id] = text.body.files[0].memory_ids;
    const plain = (await t.api('GET', `${C('plain')}/memories/${id}`)).body.provenance;
    expect(plain).toMatchObject({ kind: 'file', chunk: 1 });
    expect(plain).not.toHaveProperty('page');
    const made = await t.api('POST', `${C('plain')}/memories`, {
      text: 'client metadata',
      metadata: { key: 'elsewhere/x.pdf', page: 'two', last_page: 2.5, sheet: 3, last_sheet: '' },
    });
    expect(made.status).toBe(201);
    expect(made.body.provenance).toEqual({ kind: 'file', file_key: 'elsewhere/x.pdf' });
  });
});

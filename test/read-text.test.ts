import { createCanvas } from '@napi-rs/canvas';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmUnavailableError } from '../src/ports/llm/llm.ts';
import { chunkSpans, chunkText } from '../src/services/files/chunk.ts';
import { loadConfig } from '../src/core/config.ts';
import { partsOf } from '../src/services/files/file-memories.ts';
import { readText, type MediaReader } from '../src/services/files/read-text.ts';
import { FileLimitError, UnreadableFileError } from '../src/services/files/unreadable.ts';
import { closeOcr } from '../src/services/files/ocr.ts';
import { resolveLlm } from '../src/services/llm/tenant-llm.ts';
import * as doc from './support/documents.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

let llm: FakeLlm;
let server: TestServer;
let tenantId: string;
/** The tenant's resolved LLM: the real TenantLlm, recording usage, against the fake endpoint. */
let media: MediaReader;

beforeAll(async () => {
  llm = await startFakeLlm();
  server = await startServer({ ORGMEM_LLM_BASE_URL: llm.url, ORGMEM_LLM_MODEL: 'fake-model', ORGMEM_LLM_MAX_RETRIES: '0' }, { worker: false });
  tenantId = (await newTenant(server.url, server.adminKey)).id;
  const resolved = await resolveLlm(server.app, tenantId);
  media = resolved.llm!;
});
afterAll(async () => {
  await closeOcr();
  await server?.close();
  await llm?.close();
});

const LIMITS = loadConfig({ ORGMEM_DATA_DIR: 'memory://' }).parse;
const read = (data: Buffer, filename: string, contentType: string, reader: MediaReader | null = null, noMediaReason?: string) =>
  readText(data, { filename, contentType }, LIMITS, reader, noMediaReason);

const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UnreadableFileError);
  return (err as UnreadableFileError).message;
};

const usage = (purpose: string) =>
  server.app.db.query<{ source: string; model: string; prompt_tokens: number; completion_tokens: number }>(
    'select source, model, prompt_tokens, completion_tokens from llm_usage where tenant_id = $1 and purpose = $2',
    [tenantId, purpose],
  );

describe('documents', () => {
  it('reads a PDF, page breaks becoming paragraph breaks', async () => {
    const lines = Array.from({ length: 45 }, (_, i) => `Line ${i + 1} of the heron report`);
    lines[0] = 'Quarterly revenue grew 14 percent';
    const out = await read(await doc.pdf(lines), 'report.pdf', 'application/pdf');
    expect(out).toMatchObject({ kind: 'pdf', mime: 'application/pdf' });
    expect(out.text).toMatch(/^Quarterly revenue grew 14 percent\nLine 2 of the heron report\n/);
    expect(out.text).toContain('Line 40 of the heron report\n\nLine 41 of the heron report');
    expect(out.text.endsWith('Line 45 of the heron report')).toBe(true);
    expect(out.parts).toEqual({ unit: 'page', starts: [0, out.text.indexOf('Line 41')] });
  });

  it("says where each of a PDF's pages begins, an empty page holding no character", async () => {
    const lines = [...Array.from({ length: 40 }, (_, i) => `Heron line ${i + 1}`), ...Array<string>(40).fill(''), 'The last page says goodbye'];
    const out = await read(await doc.pdf(lines), 'gap.pdf', 'application/pdf');
    const third = out.text.indexOf('The last page');
    expect(out.parts).toEqual({ unit: 'page', starts: [0, third - 2, third] });
    expect(out.text.slice(third - 2, third)).toBe('\n\n');
    expect(partsOf(out.parts!, { start: 0, end: third - 2 })).toEqual({ page: 1 });
    expect(partsOf(out.parts!, { start: 0, end: out.text.length })).toEqual({ page: 1, last_page: 3 });
    expect(partsOf(out.parts!, { start: third, end: out.text.length })).toEqual({ page: 3 });
    // Formats without pages or slides have none.
    expect((await read(Buffer.from('no pages here'), 'a.txt', 'text/plain')).parts).toBeUndefined();
    expect((await read(await doc.docx(['No pages until laid out.']), 'a.docx', '')).parts).toBeUndefined();
  });

  const decks = { 'deck.pptx': doc.pptx, 'deck.odp': doc.odp };
  for (const [name, deck] of Object.entries(decks)) {
    it(`says where each of a deck's slides begins, its text as it was (${name})`, async () => {
      const out = await read(await deck([['Roadmap 2025', 'Launch the kiosk'], [], ['Budget', 'Forty thousand euros']]), name, '');
      expect(out.text).toBe('Roadmap 2025\nLaunch the kiosk\nBudget\nForty thousand euros');
      const third = out.text.indexOf('Budget');
      expect(out.parts).toEqual({ unit: 'slide', starts: [0, third - 1, third] });
      expect(partsOf(out.parts!, { start: third, end: out.text.length })).toEqual({ slide: 3 });
      expect(partsOf(out.parts!, { start: 13, end: third + 6 })).toEqual({ slide: 1, last_slide: 3 });
    });
  }

  // A crafted workbook: every sheet renamed past what a spreadsheet program writes.
  const books = {
    'book.xlsx': async (sheets: Record<string, string[][]>, renamed?: string) => doc.xlsx(sheets, renamed),
    'book.ods': async (sheets: Record<string, string[][]>, renamed?: string) =>
      doc.ods(renamed === undefined ? sheets : Object.fromEntries(Object.values(sheets).map((rows, i) => [`${renamed}${' '.repeat(i)}`, rows]))),
  };
  for (const [name, book] of Object.entries(books)) {
    it(`names the sheet each part of a workbook's text is on, and no sheet when a name is not one a spreadsheet program writes (${name})`, async () => {
      const sheets = { Prices: [['Ferry', '12 euros']], Empty: [], 'Notes & plans': [['The crane is repainted.']] };
      const out = await read(await book(sheets), name, '');
      expect(out.text).toBe('Ferry\n12 euros\nThe crane is repainted.');
      const third = out.text.indexOf('The crane');
      expect(out.parts).toEqual({ unit: 'sheet', starts: [0, third - 1, third], names: ['Prices', 'Empty', 'Notes & plans'] });
      expect(partsOf(out.parts!, { start: third, end: out.text.length })).toEqual({ sheet: 'Notes & plans' });
      expect(partsOf(out.parts!, { start: 0, end: out.text.length })).toEqual({ sheet: 'Prices', last_sheet: 'Notes & plans' });
      for (const crafted of ['x'.repeat(256), '   ']) {
        const read2 = await read(await book(sheets, crafted), `crafted-${name}`, '');
        expect(read2.text, JSON.stringify(crafted)).toBe(out.text);
        expect(read2.parts, JSON.stringify(crafted)).toBeUndefined();
      }
    });
  }

  it('reads DOCX, PPTX and RTF', async () => {
    const word = await read(await doc.docx(['Project Heron ships in May.', 'Owner: Ana Lima']), 'plan.docx', 'application/octet-stream');
    expect(word.kind).toBe('docx');
    expect(word.text).toBe('Project Heron ships in May.\n\nOwner: Ana Lima');
    const deck = await read(
      await doc.pptx([
        ['Roadmap 2025', 'Launch the kiosk'],
        ['Budget', 'Forty thousand euros'],
      ]),
      'deck.pptx',
      '',
    );
    expect(deck.kind).toBe('pptx');
    for (const words of ['Roadmap 2025', 'Launch the kiosk', 'Budget', 'Forty thousand euros']) expect(deck.text).toContain(words);
    const rtf = await read(Buffer.from('{\\rtf1\\ansi Minutes of the {\\b board}\\par Next meeting in June\\par}'), 'minutes.rtf', 'application/rtf');
    expect(rtf).toMatchObject({ kind: 'rtf', text: 'Minutes of the board\nNext meeting in June' });
  });

  it('reads HTML: text, headings as written, tables by rows, no scripts, image alts or link targets', async () => {
    const page = doc.html(
      '<h1>Garden plan</h1><p>Plant <a href="https://example.com/tomatoes">tomatoes</a>   in spring.</p><img src="a.png" alt="a photo">' +
        '<table><tr><th>Crop</th><th>Month</th></tr><tr><td>Basil</td><td>June</td></tr><tr><td>Leeks</td><td>October</td></tr></table>',
    );
    const out = await read(page, 'garden.html', 'text/html; charset=utf-8');
    expect(out.kind).toBe('html');
    expect(out.text).toContain('Garden plan\n\nPlant tomatoes in spring.');
    expect(out.text).toMatch(/Crop Month\nBasil June\nLeeks October/);
    expect(out.text).not.toMatch(/example\.com|a photo|console|color/);
  });

  it('reads CSV, JSON (pretty-printed) and Markdown as text, by declared type or extension', async () => {
    const table = await read(
      doc.csv([
        ['crop', 'note'],
        ['Basil', 'likes sun, "lots"'],
      ]),
      'crops.csv',
      'application/octet-stream',
    );
    expect(table).toMatchObject({ kind: 'csv', mime: 'text/csv', text: 'crop,note\nBasil,"likes sun, ""lots"""' });

    const json = await read(Buffer.from('{"name":"Ada","langs":["en","fr"]}'), 'ada', 'application/json');
    expect(json).toMatchObject({ kind: 'json', text: '{\n  "name": "Ada",\n  "langs": [\n    "en",\n    "fr"\n  ]\n}' });
    const broken = await read(Buffer.from('{"name": "Ada",'), 'broken.json', 'text/plain');
    expect(broken).toMatchObject({ kind: 'json', text: '{"name": "Ada",' });

    const md = await read(Buffer.from('# Notes\r\n\r\n-   first   item\t\r\n\r\n\r\n\r\n\r\nEnd\u00a0 of  notes  \n'), 'notes.md', 'text/plain');
    expect(md).toMatchObject({ kind: 'markdown', text: '# Notes\n\n- first item\n\nEnd of notes' });
  });

  it('reads an email as Subject, From and the plain-text body, not its attachments', async () => {
    const mail = await doc.eml({
      from: 'Ana Lima <ana@example.com>',
      to: 'inbox@orgmem.test',
      subject: 'Trip to Lisbon',
      text: 'The flight leaves at 9:40 on Friday.',
      attachments: [{ filename: 'ticket.txt', content: 'SEAT 14C' }],
    });
    const out = await read(mail, 'trip.eml', 'message/rfc822');
    expect(out).toMatchObject({ kind: 'email', mime: 'message/rfc822' });
    expect(out.text).toBe('Subject: Trip to Lisbon\nFrom: "Ana Lima" <ana@example.com>\n\nThe flight leaves at 9:40 on Friday.');
    const htmlOnly = await read(
      await doc.eml({ from: 'bo@example.com', to: 'x@y.z', subject: 'Hi', html: '<p>Lunch <b>moved</b> to Tuesday</p>' }),
      'hi.eml',
      '',
    );
    expect(htmlOnly.text).toBe('Subject: Hi\nFrom: bo@example.com\n\nLunch moved to Tuesday');
  });
});

describe('images', () => {
  it('reads text in an image by OCR, offline, with no LLM and no traineddata cache written', async () => {
    const before = llm.calls.length;
    const out = await read(doc.png('The launch code is PELICAN 42'), 'sign.png', 'image/png');
    expect(out).toEqual({ kind: 'image', mime: 'image/png', text: 'Text in the image:\nThe launch code is PELICAN 42', written: null });
    expect(llm.calls.length).toBe(before);
    expect(existsSync(path.join(process.cwd(), 'eng.traineddata'))).toBe(false);

    // After closeOcr (what shutdown calls), the next image starts a new worker.
    await closeOcr();
    expect((await read(doc.png(['Second worker', 'reads two lines']), 'two.png', '')).text).toBe('Text in the image:\nSecond worker\nreads two lines');
  });

  it('puts the caption first when the tenant has an LLM, and records its usage', async () => {
    llm.script('caption', { content: '  A white sign with a code on it.\n' });
    const out = await read(doc.png('The launch code is PELICAN 42'), 'sign', 'application/octet-stream', media);
    expect(out.text).toBe('A white sign with a code on it.\n\nText in the image:\nThe launch code is PELICAN 42');
    const call = llm.callsNamed('caption').at(-1)!;
    expect(call.body.response_format).toBeUndefined();
    const parts = call.body.messages.at(-1)!.content as Array<{ type: string; image_url?: { url: string } }>;
    expect(parts[0]!.image_url!.url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(await usage('caption')).toEqual([expect.objectContaining({ source: 'server', model: 'fake-model' })]);
  });

  it('fails an image with no text and no caption, and an unreadable one', async () => {
    const blank = createCanvas(400, 300);
    const ctx = blank.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, 400, 300);
    expect(await failure(read(blank.toBuffer('image/png'), 'blank.png', 'image/png'))).toBe('No text found in the image');
    const broken = Buffer.concat([doc.png('x').subarray(0, 64), Buffer.alloc(256, 7)]);
    expect(await failure(read(broken, 'broken.png', 'image/png'))).toMatch(/^The image could not be read: /);
  });

  it('refuses an image over the pixel limit before OCR or a caption, naming the limit; the size comes from the header of each format', async () => {
    const calls = llm.calls.length;
    const limits = { ...LIMITS, pixels: 20_000 };
    const over = 'The image was not read: it is 250 × 100 pixels (0.025 megapixels), more than the limit of 0.02 megapixels (ORGMEM_PARSE_MAX_MEGAPIXELS)';
    const canvas = createCanvas(250, 100);
    const le16 = (n: number) => [n & 255, n >> 8];
    const le32 = (n: number) => [...le16(n & 0xffff), ...le16(n >>> 16)];
    const headers: Record<string, Buffer> = {
      png: canvas.toBuffer('image/png'),
      jpeg: canvas.toBuffer('image/jpeg'),
      webp: canvas.toBuffer('image/webp'),
      gif: Buffer.from([...Buffer.from('GIF89a'), ...le16(250), ...le16(100), 0, 0, 0, 0x3b]),
      bmp: Buffer.from([
        ...Buffer.from('BM'),
        ...le32(54),
        0,
        0,
        0,
        0,
        ...le32(54),
        ...le32(40),
        ...le32(250),
        ...le32(-100),
        1,
        0,
        24,
        0,
        ...Array(24).fill(0),
      ]),
      // Little-endian TIFF, one directory of two entries: width (SHORT) and height (LONG).
      tiff: Buffer.from([
        ...Buffer.from('II*\0'),
        ...le32(8),
        ...le16(2),
        ...le16(256),
        ...le16(3),
        ...le32(1),
        ...le16(250),
        0,
        0,
        ...le16(257),
        ...le16(4),
        ...le32(1),
        ...le32(100),
        ...le32(0),
      ]),
    };
    for (const [format, data] of Object.entries(headers)) {
      const err = await readText(data, { filename: `big.${format}`, contentType: `image/${format}` }, limits, media).catch((e: unknown) => e);
      expect(err, format).toBeInstanceOf(FileLimitError);
      expect((err as Error).message, format).toBe(over);
    }
    expect(llm.calls.length).toBe(calls);
    // Within the limit, the image is read as before.
    const fits = await readText(doc.png('The launch code is PELICAN 42'), { filename: 'sign.png', contentType: 'image/png' }, LIMITS, null);
    expect(fits.text).toBe('Text in the image:\nThe launch code is PELICAN 42');
  });
});

describe('audio and video', () => {
  it('transcribes through the endpoint, sending the file with its sniffed extension, and records usage', async () => {
    llm.script('transcription', { content: ' Meet at the harbour at noon. ' });
    const sound = doc.wav(0.5);
    const out = await read(sound, 'voice-note', 'application/octet-stream', media);
    expect(out).toEqual({ kind: 'audio', mime: 'audio/wav', text: 'Meet at the harbour at noon.', written: null });
    const call = llm.callsNamed('transcription').at(-1)!;
    expect(call.path).toBe('/v1/audio/transcriptions');
    expect(call.body.model).toBe('whisper-1');
    expect(call.file).toMatchObject({ filename: 'voice-note.wav', type: 'audio/wav', size: sound.length });
    expect(call.file!.data.equals(sound)).toBe(true);
    const [row] = await usage('transcription');
    expect(row).toMatchObject({ source: 'server', model: 'whisper-1' });
    expect(row!.prompt_tokens).toBeGreaterThan(0);
  });

  it('fails with the reason to act on when there is no LLM, and passes the endpoint failure on', async () => {
    expect(await failure(read(doc.wav(0.2), 'memo.wav', 'audio/wav'))).toBe(
      'Audio and video need an LLM endpoint with /audio/transcriptions; configure one with PUT /v1/memory/extraction/config',
    );
    expect(await failure(read(doc.wav(0.2), 'memo.wav', 'audio/wav', null, 'The monthly LLM spend cap is reached'))).toBe(
      'The monthly LLM spend cap is reached',
    );

    llm.script('transcription', { status: 400, message: 'model fake-model does not transcribe' });
    const err = await read(doc.wav(0.2), 'memo.wav', 'audio/wav', media).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmUnavailableError);
    expect((err as Error).message).toBe('400 model fake-model does not transcribe');
  });
});

describe('the character limit', () => {
  const json = Buffer.from('{"tide":[1,2,3]}');
  const readJson = (chars: number) => readText(json, { filename: 't.json', contentType: 'application/json' }, { ...LIMITS, chars }, null);

  it('keeps a JSON file as it came when its indented form would not fit, and refuses text over the limit naming it', async () => {
    expect((await readJson(1000)).text).toBe('{\n  "tide": [\n    1,\n    2,\n    3\n  ]\n}');
    expect((await readJson(json.length)).text).toBe('{"tide":[1,2,3]}');
    const err = await readJson(json.length - 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileLimitError);
    expect((err as Error).message).toBe(
      `The JSON file was not read: it holds ${json.length} characters of text, more than the limit of ${json.length - 1} (ORGMEM_PARSE_MAX_CHARS)`,
    );
  });
});

describe('bad files and types', () => {
  it('fails a corrupt PDF with the parser reason, and a scanned-looking one with a hint', async () => {
    expect(await failure(read(doc.corruptPdf(), 'bad.pdf', 'application/pdf'))).toBe('The PDF could not be read: Invalid PDF structure.');
    expect(await failure(read(await doc.pdf([]), 'scan.pdf', 'application/pdf'))).toMatch(/^No text found in the PDF \(a scanned PDF/);
  });

  it('fails unknown binary data and recognised but unsupported types', async () => {
    const noise = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37 + 11) % 256));
    expect(await failure(read(noise, 'blob.bin', 'application/octet-stream'))).toMatch(
      /^Unsupported file type \(blob\.bin: binary data of no known format, declared as application\/octet-stream\); supported are PDF, /,
    );
    expect(await failure(read(noise, 'notes.txt', 'text/plain'))).toMatch(
      /^Unsupported file type \(notes\.txt: binary data of no known format, declared as text\/plain\)/,
    );
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(120)]);
    expect(await failure(read(elf, 'tool', ''))).toMatch(/^Unsupported file type \(tool: application\/x-elf\); supported/);
    // HEIC (an iPhone's photos): neither OCR nor the EXIF reader decodes it (docs/files.md).
    const heic = Buffer.concat([Buffer.from('\0\0\0\x18ftypheic\0\0\0\0mif1heic', 'latin1'), Buffer.alloc(64)]);
    expect(await failure(read(heic, 'IMG_0001.HEIC', 'image/heic'))).toMatch(/^Unsupported file type \(IMG_0001\.HEIC: image\/heic\); supported/);
  });

  it('trusts the bytes over a wrong declared type', async () => {
    const out = await read(await doc.pdf(['Sniffed, not declared']), 'notes.txt', 'text/plain');
    expect(out).toMatchObject({ kind: 'pdf', mime: 'application/pdf', text: 'Sniffed, not declared' });
    const text = await read(Buffer.from('Plain words after all'), 'photo.png', 'image/png');
    expect(text).toMatchObject({ kind: 'text', mime: 'text/plain', text: 'Plain words after all' });
  });

  it('strips NUL, control characters and lone surrogates', async () => {
    const utf8 = await read(Buffer.from('Invoice 42\u0000 paid in full\u0007 on Monday'), 'a.txt', 'text/plain');
    expect(utf8.text).toBe('Invoice 42 paid in full on Monday');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Invoice\u0000 43 \uD800paid \uDC00today', 'utf16le')]);
    const out = await read(utf16, 'b.txt', 'text/plain');
    expect(out.text).toBe('Invoice 43 paid today');
    const latin1 = await read(Buffer.from('Caf\xe9 cr\xe8me, 3 \x80', 'latin1'), 'c.txt', 'text/plain');
    expect(latin1.text).toBe('Café crème, 3 €');
  });
});

describe('chunkText', () => {
  const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa'.split(' ');
  let seed = 11;
  const next = (n: number) => (seed = (seed * 16807) % 2147483647) % n;
  const sentence = () => `${Array.from({ length: 4 + next(12) }, () => words[next(words.length)]).join(' ')}.`;
  const paragraph = () => Array.from({ length: 1 + next(20) }, sentence).join(' ');
  const text = Array.from({ length: 40 }, paragraph).join('\n\n');

  it('keeps every chunk within the limit, non-empty, every word whole and in order, the same each time', () => {
    for (const max of [120, 500, 2000]) {
      const chunks = chunkText(text, max);
      expect(chunks.length).toBeGreaterThan(text.length / max - 1);
      for (const c of chunks) {
        expect(c.length).toBeLessThanOrEqual(max);
        expect(c).toBe(c.trim());
        expect(c).not.toBe('');
      }
      expect(chunks.join(' ').split(/\s+/)).toEqual(text.split(/\s+/));
      expect(chunkText(text, max)).toEqual(chunks);
    }
  });

  it('cuts at paragraphs first, then sentences, then words, packing small pieces', () => {
    const p = (c: string) => `${c.repeat(9)} `.repeat(80).trim(); // 799 characters, no sentence end
    expect(chunkText([p('a'), p('b'), p('c')].join('\n\n\n'), 2000)).toEqual([`${p('a')}\n\n${p('b')}`, p('c')]);

    const sentences = Array.from({ length: 30 }, (_, i) => `Sentence ${i} says something fairly ordinary here.`).join(' ');
    const chunks = chunkText(sentences, 500);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const c of chunks) expect(c).toMatch(/^Sentence \d+ .*here\.$/);

    expect(chunkText('word '.repeat(30).trim(), 24)).toEqual(Array(6).fill('word word word word word'));
  });

  it('cuts a token only when it alone is longer than a chunk, never inside a surrogate pair', () => {
    expect(chunkText(`short ${'x'.repeat(4500)} tail`, 2000).map((c) => c.length)).toEqual([5, 2000, 2000, 505]);
    const emoji = chunkText('😀'.repeat(1500), 2001);
    expect(emoji.map((c) => c.length)).toEqual([2000, 1000]);
    expect(emoji).toEqual(['😀'.repeat(1000), '😀'.repeat(500)]);
    expect(chunkText(' \n\n \t ')).toEqual([]);
    expect(chunkText('Short note.')).toEqual(['Short note.']);
  });

  it('says where each chunk lies: its span holds its words and nothing else, spans in order and apart', () => {
    for (const max of [120, 2000]) {
      const padded = `\n  ${text}\n\n`;
      const spans = chunkSpans(padded, max);
      expect(spans.map((c) => c.text)).toEqual(chunkText(padded, max));
      spans.forEach((c, i) => {
        const source = padded.slice(c.start, c.end);
        expect(source).toBe(source.trim());
        expect(source.split(/\s+/)).toEqual(c.text.split(/\s+/));
        if (i > 0) expect(c.start).toBeGreaterThan(spans[i - 1]!.end);
      });
    }
    const sliced = chunkSpans(`short ${'x'.repeat(4500)} tail`, 2000);
    expect(sliced.map((c) => [c.start, c.end])).toEqual([
      [0, 5],
      [6, 2006],
      [2006, 4006],
      [4006, 4511],
    ]);
  });
});

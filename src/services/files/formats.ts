import { storable } from '../memory/storable.ts';
import { believable, officeDate, pdfInfoDate } from './document-date.ts';
import { FileLimitError, type ReadLimits } from './unreadable.ts';
import { unzipsPast } from './zip-size.ts';

/**
 * One reader per document format, each returning the raw text its library gives; the libraries
 * are imported on first use so the server's start-up does not load them. Their errors are left
 * as they are: read-text.ts turns them into the reason shown for the file. They run in the
 * bounded runner (parse-runner.ts), each under the limits it can check before the heavy work.
 */

/** The formats the runner reads: `office` is PPTX, XLSX, the OpenDocument formats and RTF; `mail-html` a mail's body, links kept. */
export type DocumentKind = 'pdf' | 'docx' | 'office' | 'html' | 'mail-html' | 'email';

/** A document read: its raw text, and when it says it was written (document-date.ts), null when it does not. */
export interface ReadDocument {
  text: string;
  written: string | null;
  /** A PDF's pages, a presentation's slides or a spreadsheet's sheets, so a chunk can name the ones it is on (docs/files.md, "A document's pages"). */
  parts?: Parts;
}

/**
 * Where each part (page, slide or sheet, the first one first) begins in a text; an empty part
 * begins where the one before it ends. Sheets are named, not numbered: `names` holds each one's.
 */
export interface Parts {
  unit: PartUnit;
  starts: number[];
  names?: string[];
}
export type PartUnit = 'page' | 'slide' | 'sheet';

/**
 * What each reader puts between its parts: a PDF's page breaks become paragraph breaks, which
 * chunking splits at first; officeparser joins a deck's slides and a workbook's sheets with line breaks.
 */
export const PART_BREAK: Record<PartUnit, string> = { page: '\n\n', slide: '\n', sheet: '\n' };

/** The longest sheet name believed: a spreadsheet program allows 31 characters, so a longer one is a crafted file's. */
const SHEET_NAME_MAX = 255;

/** What a document holds as raw text, over no limit (FileLimitError otherwise), and its date. HTML comes decoded, the others as bytes. */
export async function readDocument(kind: DocumentKind, input: Buffer | string, limits: ReadLimits): Promise<ReadDocument> {
  const data = typeof input === 'string' ? Buffer.from(input) : input;
  const read: ReadDocument =
    kind === 'pdf'
      ? await readPdf(data, limits)
      : kind === 'docx'
        ? { text: await readDocx(data, limits), written: officeDate(data) }
        : kind === 'office'
          ? { ...(await readOffice(data, limits)), written: officeDate(data) }
          : kind === 'email'
            ? await readEmail(data, limits)
            : { text: await readHtml(typeof input === 'string' ? input : input.toString('utf8'), limits, kind === 'mail-html'), written: null };
  if (read.text.length > limits.chars) throw overChars(read.text.length, limits);
  return read;
}

export const overChars = (length: number, limits: ReadLimits) =>
  new FileLimitError(`it holds ${length} characters of text, more than the limit of ${limits.chars} (ORGMEM_PARSE_MAX_CHARS)`);

async function readPdf(data: Buffer, limits: ReadLimits): Promise<ReadDocument> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  // pdf.js takes over the buffer it is given, so it gets a copy; `isEvalSupported: false` keeps
  // fonts of untrusted files from being compiled to code; `verbosity: 0` keeps its warnings quiet.
  const pdf = await getDocumentProxy(new Uint8Array(data), { isEvalSupported: false, verbosity: 0 });
  try {
    // The page count is read from the page tree's root, before any page is.
    if (pdf.numPages > limits.pages) throw new FileLimitError(`it has ${pdf.numPages} pages, more than the limit of ${limits.pages} (ORGMEM_PARSE_MAX_PAGES)`);
    const { text } = await extractText(pdf, { mergePages: false });
    const { info } = await pdf.getMetadata().catch(() => ({ info: undefined }));
    const starts: number[] = [];
    text.reduce((at, page) => (starts.push(at), at + page.length + PART_BREAK.page.length), 0);
    return { text: text.join(PART_BREAK.page), written: pdfInfoDate(info as Record<string, unknown> | undefined), parts: { unit: 'page', starts } };
  } finally {
    await pdf.destroy();
  }
}

async function readDocx(data: Buffer, limits: ReadLimits): Promise<string> {
  await checkUnzipped(data, limits);
  const { default: mammoth } = await import('mammoth');
  return (await mammoth.extractRawText({ buffer: data })).value;
}

/** PPTX, XLSX, the OpenDocument formats and RTF (officeparser finds which from the bytes). */
async function readOffice(data: Buffer, limits: ReadLimits): Promise<Pick<ReadDocument, 'text' | 'parts'>> {
  await checkUnzipped(data, limits);
  const { OfficeParser } = await import('officeparser');
  try {
    const ast = await OfficeParser.parseOffice(data, { outputErrorToConsole: false });
    const text = ast.toText();
    const parts = officeParts(ast, text, limits.pages);
    return parts ? { text, parts } : { text };
  } catch (err) {
    // Its messages come prefixed with its name, sometimes twice.
    throw new Error(String(err instanceof Error ? err.message : err).replace(/^(\[OfficeParser\]:\s*)+/, ''), { cause: err });
  }
}

type OfficeAst = Awaited<ReturnType<(typeof import('officeparser'))['OfficeParser']['parseOffice']>>;

/** The office formats whose top-level nodes are parts: a deck's slides, a workbook's sheets (OOXML and OpenDocument alike). */
const PART_UNIT: Partial<Record<OfficeAst['type'], 'slide' | 'sheet'>> = { pptx: 'slide', odp: 'slide', xlsx: 'sheet', ods: 'sheet' };

/**
 * Where each slide of a deck (or sheet of a workbook) begins in its text, for PPTX and ODP decks and
 * XLSX and ODS workbooks. A part's own text is
 * what the parser's toText gives for it alone: toText reads the tree's top-level list
 * (`content`), so each part is put there alone in turn, and the list is put back. A speaker's
 * notes, when they come as a node of their own, belong to the slide before them. The parser
 * leaves out a slide without text but keeps the others' numbers: a slide left out is an empty
 * part, so the numbers stay the deck's (one past `maxParts`, ORGMEM_PARSE_MAX_PAGES, is not
 * believed). A sheet is named by the workbook (a name that is not one a spreadsheet program
 * writes is not believed). Each part costs a toText of its own, so a file of more top-level
 * nodes (slides, notes, sheets) than `maxParts` is left unnamed rather than read that many
 * times over. Undefined unless the parts' texts joined as toText joins them (the
 * non-empty ones, PART_BREAK between) are the whole text, so a parser that reads otherwise leaves
 * the parts unnamed rather than misnamed.
 */
function officeParts(ast: OfficeAst, text: string, maxParts: number): Parts | undefined {
  const unit = PART_UNIT[ast.type];
  if (!unit) return undefined;
  const nodes = ast.content.slice();
  if (nodes.length > maxParts) return undefined;
  let own: string[];
  try {
    own = nodes.map((node) => (ast.content.splice(0, ast.content.length, node), ast.toText()));
  } catch {
    return undefined; // naming the parts never fails a file the parser read
  } finally {
    ast.content.splice(0, ast.content.length, ...nodes);
  }
  const starts: number[] = [];
  const names: string[] = [];
  let at = 0;
  for (const [i, node] of nodes.entries()) {
    const t = own[i]!;
    const begins = t && at > 0 ? at + PART_BREAK[unit].length : at;
    if (unit === 'slide' && node.type !== 'note') {
      const number = (node.metadata as { slideNumber?: unknown } | undefined)?.slideNumber;
      if (typeof number === 'number' && Number.isInteger(number) && number > starts.length + 1) {
        if (number > maxParts) return undefined;
        while (starts.length < number - 1) starts.push(at);
      }
      starts.push(begins);
    }
    if (unit === 'sheet' && node.type === 'sheet') {
      const name = (node.metadata as { sheetName?: unknown } | undefined)?.sheetName;
      if (typeof name !== 'string' || !sheetName(name)) return undefined;
      names.push(name);
      starts.push(begins);
    }
    if (t) at = begins + t.length;
  }
  const joined = own.filter(Boolean).join(PART_BREAK[unit]);
  if (!starts.length || joined !== text) return undefined;
  return unit === 'sheet' ? { unit, starts, names } : { unit, starts };
}

/** A name a spreadsheet program could have written: not empty, not too long, no control characters, no lone surrogate. */
const sheetName = (name: string) => name.trim() !== '' && name.length <= SHEET_NAME_MAX && !/\p{Cc}/u.test(name) && storable(name) === name;

/** An office file (a zip; RTF is not one) whose parts inflate past the limit is refused before its reader inflates them. */
async function checkUnzipped(data: Buffer, limits: ReadLimits): Promise<void> {
  if (data[0] === 0x50 && data[1] === 0x4b && (await unzipsPast(data, limits.unzippedBytes)))
    throw new FileLimitError(`its parts unzip to more than the limit of ${limits.unzippedBytes} bytes (ORGMEM_PARSE_MAX_UNZIPPED_MB)`);
}

/**
 * The text of an HTML page. Its nesting is measured first by a streaming parse (no recursion):
 * html-to-text walks the tree recursively, and a page nested thousands deep would overflow the
 * stack or take minutes. A mail's body keeps its link targets (`keepLinks`); a file's drops them.
 */
async function readHtml(html: string, limits: ReadLimits, keepLinks = false): Promise<string> {
  await checkDepth(html, limits);
  const { convert } = await import('html-to-text');
  return convert(html, {
    wordwrap: false,
    selectors: [
      // Link targets and images are noise in a search index; tables keep their rows and columns.
      { selector: 'a', options: keepLinks ? { hideLinkHrefIfSameAsText: true } : { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 200 } },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    ],
  });
}

/** The text of a received mail (docs/contract.md, "Email drop"): `Subject: …\nFrom: …\n\n<plain-text body>`. */
async function readEmail(data: Buffer, limits: ReadLimits): Promise<ReadDocument> {
  const { simpleParser } = await import('mailparser');
  const mail = await simpleParser(data, { skipHtmlToText: true, skipImageLinks: true, skipTextToHtml: true });
  const body = mail.text?.trim() || (mail.html ? await readHtml(mail.html, limits) : '');
  const text = `Subject: ${mail.subject ?? '(no subject)'}\nFrom: ${mail.from?.text ?? '(unknown sender)'}\n\n${body}`;
  return { text, written: believable(mail.date) };
}

async function checkDepth(html: string, limits: ReadLimits): Promise<void> {
  const { Parser } = await import('htmlparser2');
  let depth = 0;
  const parser = new Parser({
    onopentag() {
      if (++depth > limits.depth) throw new FileLimitError(`its elements nest deeper than the limit of ${limits.depth} levels (ORGMEM_PARSE_MAX_DEPTH)`);
    },
    onclosetag() {
      depth--;
    },
  });
  parser.end(html);
}

/**
 * The bytes as text when they are text: UTF-16 with its byte-order mark, UTF-8, else (no NUL,
 * hardly any control characters) Windows-1252, what older tools write. Null for binary data.
 */
export function decodeText(data: Buffer): string | null {
  // Buffer keeps lone surrogates (TextDecoder would store U+FFFD in their place) for the cleaning to drop.
  if (data[0] === 0xff && data[1] === 0xfe) return data.subarray(2).toString('utf16le');
  if (data[0] === 0xfe && data[1] === 0xff)
    return Buffer.from(data.subarray(2, data.length - (data.length % 2)))
      .swap16()
      .toString('utf16le');
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    // Valid UTF-8 by chance (short binary records) still shows as a wall of control characters.
    return controlShare(text) <= 0.1 ? text : null;
  } catch {
    const text = data.toString('latin1').replace(/[\x80-\x9f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80]!);
    return !text.includes('\0') && controlShare(text) <= 0.01 ? text : null;
  }
}

/** Where Windows-1252 differs from Latin-1 (0x80-0x9F); Node's TextDecoder reads it as Latin-1. */
const CP1252 = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ';

/** The share of control characters other than tab, newlines, form feed and escape in the first 8 KB. */
function controlShare(text: string): number {
  const sample = text.slice(0, 8192);
  if (!sample) return 0;
  return (sample.match(/[\u0000-\u0008\u000E-\u001A\u001C-\u001F\u007F]/g)?.length ?? 0) / sample.length;
}

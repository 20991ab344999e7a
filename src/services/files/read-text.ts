import { fileTypeFromBuffer } from 'file-type';
import path from 'node:path';
import { decodeText, overChars, PART_BREAK, type Parts, type ReadDocument } from './formats.ts';
import { imageDate } from './image-date.ts';
import { imageDimensions } from './image-dimensions.ts';
import { ocrImage } from './ocr.ts';
import { parseDocument, type ParseLimits } from './parse-runner.ts';
import { FileLimitError, UnreadableFileError } from './unreadable.ts';

/** What reads images and sound: the tenant's resolved LLM (TenantLlm satisfies this structurally). */
export interface MediaReader {
  caption(image: Buffer, mime: string): Promise<string>;
  transcribe(data: Buffer, filename: string, mime: string): Promise<string>;
}

type Kind = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'odt' | 'rtf' | 'html' | 'markdown' | 'text' | 'csv' | 'json' | 'email' | 'image' | 'audio' | 'video';

export interface FileText {
  text: string;
  /** The type the bytes were found to be, whatever was declared. */
  mime: string;
  /** `odt` stands for the three OpenDocument formats (text, spreadsheet, presentation). */
  kind: Kind;
  /** When the file's own metadata says it was written (document-date.ts) or taken (image-date.ts); null when it does not say. */
  written: string | null;
  /** A PDF's pages or a presentation's slides: where each begins in `text` (file-memories.ts names a chunk's from it). */
  parts?: Parts;
}

const NO_MEDIA = 'Audio and video need an LLM endpoint with /audio/transcriptions; configure one with PUT /v1/memory/extraction/config';
const SUPPORTED =
  'PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), OpenDocument, RTF, HTML, Markdown, text, CSV, JSON, email (.eml), images, audio and video';

const LABEL: Record<Kind, string> = {
  pdf: 'the PDF',
  docx: 'the Word document',
  pptx: 'the presentation',
  xlsx: 'the spreadsheet',
  odt: 'the OpenDocument file',
  rtf: 'the RTF document',
  html: 'the HTML page',
  markdown: 'the Markdown file',
  text: 'the text file',
  csv: 'the CSV file',
  json: 'the JSON file',
  email: 'the email',
  image: 'the image',
  audio: 'the audio',
  video: 'the video',
};

/** Formats recognised from their bytes, by the extension file-type gives them. */
const BINARY: Record<string, Kind> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  odt: 'odt',
  ods: 'odt',
  odp: 'odt',
  rtf: 'rtf',
  ...Object.fromEntries(['png', 'jpg', 'gif', 'webp', 'bmp', 'tif'].map((ext) => [ext, 'image' as const])),
};

/** Formats without magic bytes, by declared type then by extension. */
const TEXT_TYPES: Record<string, Kind> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'application/json': 'json',
  'message/rfc822': 'email',
};
const TEXT_EXTENSIONS: Record<string, Kind> = {
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  md: 'markdown',
  markdown: 'markdown',
  csv: 'csv',
  tsv: 'csv',
  json: 'json',
  eml: 'email',
};
const TEXT_MIME: Partial<Record<Kind, string>> = {
  html: 'text/html',
  markdown: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  email: 'message/rfc822',
  text: 'text/plain',
};

/** Images a vision endpoint takes (OpenAI's list); BMP and TIFF are read by OCR only. */
const CAPTIONED = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * A file's text. The type is sniffed from the bytes, else taken from the declared content type,
 * else from the filename's extension. Images are read by OCR, offline, and captioned when a media
 * reader is given; audio and video need one to be transcribed. Documents (PDF, office files, HTML,
 * mail) are read by the bounded runner under `limits` (parse-runner.ts). A file that cannot become
 * text throws UnreadableFileError (FileLimitError over a limit); a failure of the media reader
 * (the LLM endpoint) is thrown as it is, so the caller can try again later.
 */
export async function readText(
  data: Buffer,
  declared: { filename: string; contentType: string },
  limits: ParseLimits,
  media: MediaReader | null,
  noMediaReason?: string,
): Promise<FileText> {
  const declaredMime = declared.contentType.split(';')[0]!.trim().toLowerCase();
  const extension = path.extname(declared.filename).slice(1).toLowerCase();
  let sniffed = await fileTypeFromBuffer(data);
  // file-type takes the UTF-16LE byte-order mark (FF FE), with which Windows writes "Unicode"
  // text, for an MPEG-1 Layer I frame, a format hardly met since the 1990s.
  if (sniffed?.ext === 'mp1' && data[0] === 0xff && data[1] === 0xfe) sniffed = undefined;
  // XML and zip say too little: an XHTML page, or an office file whose parts file-type did not find.
  if (sniffed && sniffed.ext !== 'xml' && sniffed.ext !== 'zip') {
    const kind = sniffed.mime.startsWith('audio/')
      ? 'audio'
      : sniffed.mime.startsWith('video/')
        ? declaredMime.startsWith('audio/')
          ? 'audio'
          : 'video'
        : BINARY[sniffed.ext];
    if (!kind)
      throw unsupported(declared.filename, sniffed.mime, sniffed.ext === 'cfb' ? '; save old Office files (.doc, .xls, .ppt) as .docx, .xlsx or .pptx' : '');
    const mime = kind === 'audio' && sniffed.ext === 'webm' ? 'audio/webm' : sniffed.mime;
    const file = extension === sniffed.ext ? declared.filename : `${declared.filename}.${sniffed.ext}`;
    return { kind, mime, ...(await readBinary(kind, data, mime, file, limits, media, noMediaReason)) };
  }
  if (sniffed?.ext === 'zip') {
    const office = ['docx', 'pptx', 'xlsx', 'odt', 'ods', 'odp'].includes(extension) ? BINARY[extension] : undefined;
    if (!office) throw unsupported(declared.filename, sniffed.mime, '; upload the files inside the archive instead');
    return { kind: office, mime: sniffed.mime, ...(await readBinary(office, data, sniffed.mime, declared.filename, limits, media, noMediaReason)) };
  }
  const decoded = decodeText(data);
  if (decoded === null) throw unsupported(declared.filename, `binary data of no known format, declared as ${declaredMime || 'nothing'}`, '');
  const kind = TEXT_TYPES[declaredMime] ?? TEXT_EXTENSIONS[extension] ?? 'text';
  const read = await readDecoded(kind, data, decoded, limits);
  return { kind, mime: TEXT_MIME[kind]!, text: finish(kind, limits, read.text), written: read.written };
}

async function readBinary(
  kind: Kind,
  data: Buffer,
  mime: string,
  filename: string,
  limits: ParseLimits,
  media: MediaReader | null,
  noMediaReason: string | undefined,
): Promise<Pick<FileText, 'text' | 'written' | 'parts'>> {
  if (kind === 'image') return { text: await readImage(data, mime, limits, media), written: imageDate(data) };
  if (kind === 'audio' || kind === 'video') {
    if (!media) throw new UnreadableFileError(noMediaReason ?? NO_MEDIA);
    const transcript = clean(await media.transcribe(data, filename, mime));
    if (!transcript) throw new UnreadableFileError(`No speech found in ${LABEL[kind]}`);
    return { text: transcript, written: null };
  }
  let raw: ReadDocument;
  try {
    raw = await parseDocument(kind === 'pdf' || kind === 'docx' ? kind : 'office', data, limits);
  } catch (err) {
    if (err instanceof FileLimitError) throw overLimit(kind, err);
    if ((err as Error)?.name === 'PasswordException')
      throw new UnreadableFileError(`${capitalise(LABEL[kind])} is password-protected; remove the password and upload it again`);
    throw new UnreadableFileError(`${capitalise(LABEL[kind])} could not be read: ${reason(err)}`);
  }
  const hint = kind === 'pdf' ? ' (a scanned PDF has no text layer: upload its pages as images to read them by OCR)' : '';
  const text = finish(kind, limits, raw.text, hint);
  const parts = raw.parts && cleanParts(raw.text, raw.parts, text);
  return parts ? { text, written: raw.written, parts } : { text, written: raw.written };
}

/**
 * Where each part begins in the cleaned text: each part cleaned alone and joined by the reader's
 * break gives the text cleaning the whole gave (cleaning keeps a paragraph or line break as it
 * is), and the lengths give the starts; an empty part begins where the one before it ends, so no
 * character is on it. Undefined when the two texts differ (a slide whose own text ends in a blank
 * line, which the whole keeps and the slide alone loses), so the parts are left unnamed rather
 * than misnamed.
 */
function cleanParts(raw: string, parts: Parts, cleaned: string): Parts | undefined {
  const join = PART_BREAK[parts.unit];
  let text = '';
  const starts = parts.starts.map((start, i) => {
    const part = clean(raw.slice(start, parts.starts[i + 1] ?? raw.length));
    if (part && text) text += join;
    const begins = text.length;
    text += part;
    return begins;
  });
  return text === cleaned ? { ...parts, starts } : undefined;
}

/** The caption (when there is a media reader) then the text OCR reads in the image. */
async function readImage(data: Buffer, mime: string, limits: ParseLimits, media: MediaReader | null): Promise<string> {
  // OCR decodes every pixel into memory: a small file may declare a huge image.
  const size = imageDimensions(data);
  if (size && size.width * size.height > limits.pixels) {
    const megapixels = (n: number) => `${Number((n / 1_000_000).toPrecision(3))} megapixels`;
    throw overLimit(
      'image',
      new FileLimitError(
        `it is ${size.width} × ${size.height} pixels (${megapixels(size.width * size.height)}), more than the limit of ${megapixels(limits.pixels)} (ORGMEM_PARSE_MAX_MEGAPIXELS)`,
      ),
    );
  }
  const [caption, ocr] = await Promise.allSettled([media && CAPTIONED.has(mime) ? media.caption(data, mime) : '', ocrImage(data, limits.timeoutMs)]);
  if (caption.status === 'rejected') throw caption.reason;
  if (ocr.status === 'rejected' && ocr.reason instanceof FileLimitError) throw overLimit('image', ocr.reason);
  const described = clean(caption.value);
  if (ocr.status === 'rejected' && !described) throw new UnreadableFileError(`The image could not be read: ${reason(ocr.reason)}`);
  const seen = ocr.status === 'fulfilled' ? clean(ocr.value) : '';
  return finish('image', limits, [described, seen && `Text in the image:\n${seen}`].filter(Boolean).join('\n\n'));
}

async function readDecoded(kind: Kind, data: Buffer, text: string, limits: ParseLimits): Promise<ReadDocument> {
  if (kind === 'html' || kind === 'email') {
    try {
      return await parseDocument(kind, kind === 'html' ? text : data, limits);
    } catch (err) {
      if (err instanceof FileLimitError) throw overLimit(kind, err);
      throw new UnreadableFileError(`${capitalise(LABEL[kind])} could not be read: ${reason(err)}`);
    }
  }
  if (kind !== 'json') return { text, written: null };
  try {
    // Indenting lengthens it: a file that fits the character limit as it came stays as it came.
    const pretty = JSON.stringify(JSON.parse(text), null, 2);
    return { text: pretty.length <= limits.chars ? pretty : text, written: null };
  } catch {
    return { text, written: null }; // JSON with an error is still worth its words
  }
}

/** The text cleaned, or UnreadableFileError when nothing is left, FileLimitError when too much is. */
function finish(kind: Kind, limits: ParseLimits, raw: string, hint = ''): string {
  const text = clean(raw, kind === 'json');
  if (!text) throw new UnreadableFileError(`No text found in ${LABEL[kind]}${hint}`);
  if (text.length > limits.chars) throw overLimit(kind, overChars(text.length, limits));
  return text;
}

/** A limit's refusal, saying which file's kind it was: "The PDF was not read: it has 100000 pages, …". */
const overLimit = (kind: Kind, err: FileLimitError) => new FileLimitError(`${capitalise(LABEL[kind])} was not read: ${err.message}`);

const SPACE = '[ \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]';
const TAB_RUN = new RegExp(`${SPACE}*\\t[\\t${SPACE.slice(1, -1)}]*`, 'g');
/**
 * What becomes one space: a run of two or more, or one space other than U+0020. A lone U+0020 is
 * left alone, which gives the same text as replacing it by itself, without a replacement for
 * each of the 1.7 million spaces of a 10 MB text (bench/README.md, "Noisy neighbours").
 */
const SPACE_RUN = new RegExp(`${SPACE}{2,}|${SPACE.replace(' ', '')}`, 'g');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text fit to store: no NUL (PostgreSQL rejects it), other control characters or lone surrogates;
 * runs of spaces made one (tabs one tab, keeping TSV columns); lines trimmed (JSON keeps its
 * indentation); at most one blank line between paragraphs.
 */
function clean(text: string, keepIndent = false): string {
  return text
    .replace(/\r\n?|[\f\v\u2028\u2029]/g, '\n')
    .replace(LONE_SURROGATE, '')
    .replace(/[\u0000-\u0008\u000E-\u001F\u007F\uFEFF]/g, '')
    .split('\n')
    .map((line) => {
      const indent = keepIndent ? /^[ \t]*/.exec(line)![0] : '';
      const rest = line.slice(indent.length).replace(TAB_RUN, '\t').replace(SPACE_RUN, ' ').trim();
      return rest && indent + rest;
    })
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function unsupported(filename: string, what: string, hint: string): UnreadableFileError {
  return new UnreadableFileError(`Unsupported file type (${filename}: ${what})${hint}; supported are ${SUPPORTED}`);
}

/** A library's reason: its message, or what it threw (tesseract rejects with strings). */
function reason(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^Error: /, '');
}

function capitalise(s: string): string {
  return s[0]!.toUpperCase() + s.slice(1);
}

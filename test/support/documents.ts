import { createCanvas, GlobalFonts } from '@napi-rs/canvas';
import { Document, Packer, Paragraph } from 'docx';
import { createRequire } from 'node:module';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type Pptx from 'pptxgenjs';
import writeXlsxFile from 'write-excel-file/node';
import { stored, zip } from './zip.ts';

/**
 * Real files built in memory, made by the libraries people's tools use, so reading them is tested
 * on the bytes it meets in production rather than on hand-written fixtures.
 */

// pptxgenjs types its CommonJS package with an ES default export, which TypeScript reads as
// `.default` while Node's ES build has none; its CommonJS build exports the class itself.
const PptxGenJS = createRequire(import.meta.url)('pptxgenjs') as typeof Pptx.default;

export async function pdf(lines: string[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const perPage = 40;
  for (let start = 0; start < Math.max(lines.length, 1); start += perPage) {
    const page = doc.addPage([595, 842]);
    lines.slice(start, start + perPage).forEach((line, i) => page.drawText(line, { x: 50, y: 790 - i * 18, size: 12, font }));
  }
  return Buffer.from(await doc.save());
}

/** Starts like a PDF (so it is sniffed as one) but its body is garbage no parser can read. */
export function corruptPdf(): Buffer {
  return Buffer.concat([
    Buffer.from('%PDF-1.7\n%\xE2\xE3\xCF\xD3\n', 'latin1'),
    Buffer.from('1 0 obj << /Type /Catalog /Pages 9 0 R >>\nthis is not a pdf\n'.repeat(20)),
  ]);
}

export async function docx(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: paragraphs.map((text) => new Paragraph({ text })) }] });
  return Packer.toBuffer(doc);
}

/** One slide per entry, each holding its lines as one text box. */
export async function pptx(slides: string[][]): Promise<Buffer> {
  const deck = new PptxGenJS();
  for (const lines of slides) deck.addSlide().addText(lines.join('\n'), { x: 0.5, y: 0.5, w: 9, h: 4, fontSize: 24 });
  return (await deck.write({ outputType: 'nodebuffer' })) as Buffer;
}

/**
 * One sheet per entry, named by its key, each row of strings a row of cells. `renamed` gives
 * every sheet that name in the workbook as written, past what the writer itself allows (a
 * crafted file's).
 */
export async function xlsx(sheets: Record<string, string[][]>, renamed?: string): Promise<Buffer> {
  const rename = {
    files: {
      transform: {
        'xl/workbook.xml': {
          transformElementAttributes: (tag: string, attributes: Record<string, string | number>) =>
            tag === 'sheet' ? { ...attributes, name: renamed! } : attributes,
        },
      },
    },
  };
  const written = writeXlsxFile(
    Object.entries(sheets).map(([sheet, rows]) => ({ sheet, data: rows.map((row) => row.map((value) => ({ value }))) })),
    renamed === undefined ? {} : { features: [rename] },
  );
  return written.toBuffer();
}

const xmlText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** An OpenDocument file of the given body: the mimetype first and stored, as the format asks, then its content. */
function openDocument(kind: 'spreadsheet' | 'presentation', body: string): Buffer {
  const ns = [
    'office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
    'table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
    'text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
    'draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"',
  ].map((n) => `xmlns:${n}`);
  const type = `application/vnd.oasis.opendocument.${kind}`;
  return zip([
    stored('mimetype', type),
    stored(
      'META-INF/manifest.xml',
      `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="${type}"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`,
    ),
    stored(
      'content.xml',
      `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ns.join(' ')} office:version="1.2"><office:body><office:${kind}>${body}</office:${kind}></office:body></office:document-content>`,
    ),
  ]);
}

/** An OpenDocument spreadsheet (.ods): one sheet per entry, named by its key, each row of strings a row of cells. */
export function ods(sheets: Record<string, string[][]>): Buffer {
  const cell = (value: string) => `<table:table-cell office:value-type="string"><text:p>${xmlText(value)}</text:p></table:table-cell>`;
  const table = ([name, rows]: [string, string[][]]) =>
    `<table:table table:name="${xmlText(name)}">${rows.map((row) => `<table:table-row>${row.map(cell).join('')}</table:table-row>`).join('')}</table:table>`;
  return openDocument('spreadsheet', Object.entries(sheets).map(table).join(''));
}

/** An OpenDocument presentation (.odp): one slide per entry, each holding its lines in one text box. */
export function odp(slides: string[][]): Buffer {
  const page = (lines: string[], i: number) =>
    `<draw:page draw:name="page${i + 1}"><draw:frame><draw:text-box>${lines.map((l) => `<text:p>${xmlText(l)}</text:p>`).join('')}</draw:text-box></draw:frame></draw:page>`;
  return openDocument('presentation', slides.map(page).join(''));
}

export function html(body: string, title = 'Sample page'): Buffer {
  return Buffer.from(
    `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title><style>body { color: #333 }</style>` +
      `<script>console.log("not content")</script></head><body>${body}</body></html>`,
  );
}

export function csv(rows: string[][]): Buffer {
  const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  return Buffer.from(rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n');
}

let fontRegistered = false;

/**
 * Black text on white, one line per entry, in DejaVu Sans: large by default (what the OCR tests
 * read); the benchmark draws page-sized images with smaller type.
 */
export function png(text: string | string[], { width = 800, lineHeight = 70, fontPx = 40 } = {}): Buffer {
  if (!fontRegistered) fontRegistered = !!GlobalFonts.registerFromPath('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', 'DejaVu Sans');
  const lines = Array.isArray(text) ? text : [text];
  const canvas = createCanvas(width, lineHeight * lines.length + 100);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = '#000000';
  ctx.font = `${fontPx}px "DejaVu Sans"`;
  lines.forEach((line, i) => ctx.fillText(line, 40, 90 + i * lineHeight));
  return canvas.toBuffer('image/png');
}

/** A 440 Hz sine, 16 kHz mono 16-bit PCM, with its RIFF header written by hand. */
export function wav(seconds: number, hz = 440): Buffer {
  const rate = 16_000;
  const samples = Math.round(seconds * rate);
  const out = Buffer.alloc(44 + samples * 2);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write('WAVEfmt ', 8, 'ascii');
  out.writeUInt32LE(16, 16); // fmt chunk size
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28); // bytes per second
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * 12_000), 44 + i * 2);
  return out;
}

export interface EmlAttachment {
  filename: string;
  content: Buffer | string;
  contentType?: string;
}

/** An RFC 822 message as a mail client sends it: multipart/mixed when it has attachments. */
export function eml(m: {
  from: string;
  to: string;
  subject: string;
  text?: string;
  html?: string;
  attachments?: EmlAttachment[];
  messageId?: string;
}): Promise<Buffer> {
  return new MailComposer({ ...m, date: new Date('2025-03-04T10:00:00Z') }).compile().build();
}

import { constants, crc32, createDeflateRaw } from 'node:zlib';
import { stored, zip } from './zip.ts';

/**
 * Files made to exhaust a reader (docs/contract.md, "Limits"), generated small: a PDF whose page
 * tree has `pages` empty pages, HTML nested `levels` deep, and a .docx whose document part
 * inflates to `gib` GiB of repeated bytes.
 */

export function manyPagePdf(pages: number): Buffer {
  const parts: string[] = ['%PDF-1.4\n'];
  const offsets: number[] = [];
  let size = parts[0]!.length;
  const add = (body: string) => {
    offsets.push(size);
    const obj = `${offsets.length} 0 obj\n${body}\nendobj\n`;
    parts.push(obj);
    size += obj.length;
  };
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(`<< /Type /Pages /Count ${pages} /Kids [${Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(' ')}] >>`);
  for (let i = 0; i < pages; i++) add('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>');
  const xref = `xref\n0 ${offsets.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(`${xref}trailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`);
  return Buffer.from(parts.join(''), 'latin1');
}

export const nestedHtml = (levels: number, text = 'deep inside') => `<html><body>${'<div>'.repeat(levels)}${text}${'</div>'.repeat(levels)}</body></html>`;

/**
 * Raw deflate of `head`, then `mib` MiB of `unit` repeated, then `tail`: the repeated part is one
 * block made after a full flush (so it stands alone) and written `mib` times.
 */
async function deflatedRepeat(head: string, unit: string, mib: number, tail: string): Promise<{ data: Buffer; crc: number; size: number }> {
  const chunk = Buffer.from(unit.repeat(Math.ceil((1024 * 1024) / unit.length)).slice(0, 1024 * 1024 - ((1024 * 1024) % unit.length)));
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (d: Buffer) => out.push(d));
  const flushed = (data: Buffer) =>
    new Promise<Buffer>((resolve) => deflate.write(data, () => deflate.flush(constants.Z_FULL_FLUSH, () => resolve(Buffer.concat(out.splice(0))))));
  const first = await flushed(Buffer.from(head));
  const block = await flushed(chunk);
  const last = await new Promise<Buffer>((resolve) => deflate.once('end', () => resolve(Buffer.concat(out.splice(0)))).end(Buffer.from(tail)));
  let crc = crc32(head);
  for (let i = 0; i < mib; i++) crc = crc32(chunk, crc);
  crc = crc32(tail, crc);
  return { data: Buffer.concat([first, ...Array.from({ length: mib }, () => block), last]), crc, size: head.length + mib * chunk.length + tail.length };
}

/**
 * A .docx whose word/document.xml inflates to about `mib` MiB: of one repeated byte (no markup,
 * the classic bomb), or with `paragraphs`, of short Word paragraphs (a document a reader must
 * build a tree of).
 */
export async function zipBombDocx(mib: number, paragraphs = false): Promise<Buffer> {
  const w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  const bomb = paragraphs
    ? await deflatedRepeat(`<?xml version="1.0"?><w:document ${w}><w:body>`, '<w:p><w:r><w:t>word</w:t></w:r></w:p>', mib, '</w:body></w:document>')
    : await deflatedRepeat('', 'a', mib, '');
  return zip([
    stored(
      '[Content_Types].xml',
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    stored(
      '_rels/.rels',
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    { name: 'word/document.xml', method: 8, ...bomb },
  ]);
}

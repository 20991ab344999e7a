import { inflateRawSync } from 'node:zlib';

/**
 * When a document says it was written, from its own metadata (docs/time.md, "Three times"): a
 * PDF's CreationDate (else ModDate), an office file's created (else modified) property, a mail's
 * Date. Read inside the bounded runner with the text. Metadata is whatever the file's author (or
 * their clock) wrote, so a moment is believed only between 1971 and a day from now; anything
 * else, or anything unreadable, is null.
 */

const EARLIEST = Date.UTC(1971, 0, 1);
const AHEAD_MS = 24 * 3600 * 1000;
/** The properties part is a few kilobytes; a larger one is not read (whatever it inflates to). */
const MAX_PART_BYTES = 256 * 1024;

/** The moment as ISO 8601, when it is a believable moment for a document. */
export function believable(moment: Date | null | undefined): string | null {
  const ms = moment?.getTime();
  return ms !== undefined && Number.isFinite(ms) && ms >= EARLIEST && ms <= Date.now() + AHEAD_MS ? moment!.toISOString() : null;
}

/** A PDF date string, `D:YYYYMMDDHHmmSSOHH'mm'` with every part after the year optional (ISO 32000-1, 7.9.4). */
export function pdfDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(?:(\d{2})'?(\d{2})?'?)?)?/.exec(value.trim());
  if (!m) return null;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', sign, oh = '00', om = '00'] = m;
  const offset = sign === '+' || sign === '-' ? (sign === '+' ? 1 : -1) * (Number(oh) * 60 + Number(om)) : 0;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) - offset * 60_000;
  const moment = new Date(utc);
  // Date.UTC rolls a month 13 or a day 32 over; such a date is not believed.
  return Number(mo) >= 1 && Number(mo) <= 12 && Number(d) >= 1 && Number(d) <= 31 ? believable(moment) : null;
}

/** The first of the dates of a PDF's Info dictionary that can be believed. */
export const pdfInfoDate = (info: Record<string, unknown> | undefined) => pdfDate(info?.CreationDate) ?? pdfDate(info?.ModDate);

/**
 * An office file's created (else modified) property: OOXML (docx, pptx, xlsx) keeps it in
 * docProps/core.xml, OpenDocument in meta.xml. The part is found by its local header and
 * inflated with a cap on its output, so a bomb costs nothing here.
 */
export function officeDate(zip: Buffer): string | null {
  for (const [part, tags] of PARTS) {
    const xml = zipPart(zip, part);
    if (xml === null) continue;
    for (const tag of tags) {
      const m = new RegExp(`<${tag}(?:\\s[^>]*)?>\\s*([^<]{4,40}?)\\s*</${tag}>`).exec(xml);
      const found = m ? believable(new Date(m[1]!)) : null;
      if (found) return found;
    }
  }
  return null;
}
const PARTS: Array<[string, string[]]> = [
  ['docProps/core.xml', ['dcterms:created', 'dcterms:modified']],
  ['meta.xml', ['meta:creation-date', 'dc:date']],
];

/** The text of one stored or deflated zip entry, found by its local header; null when absent, too large or unreadable. */
function zipPart(zip: Buffer, name: string): string | null {
  const wanted = Buffer.from(name);
  for (let at = zip.indexOf('PK\x03\x04'); at >= 0 && at + 30 <= zip.length; at = zip.indexOf('PK\x03\x04', at + 4)) {
    const nameLength = zip.readUInt16LE(at + 26);
    if (nameLength !== wanted.length || !zip.subarray(at + 30, at + 30 + nameLength).equals(wanted)) continue;
    const method = zip.readUInt16LE(at + 8);
    const compressed = zip.readUInt32LE(at + 18);
    const start = at + 30 + nameLength + zip.readUInt16LE(at + 28);
    // Sizes written after the data (flag bit 3) are 0 here: such a part is not read.
    if (compressed === 0 || compressed > MAX_PART_BYTES || start + compressed > zip.length) return null;
    const data = zip.subarray(start, start + compressed);
    try {
      if (method === 0) return data.toString('utf8');
      if (method === 8) return inflateRawSync(data, { maxOutputLength: MAX_PART_BYTES }).toString('utf8');
    } catch {
      return null;
    }
    return null;
  }
  return null;
}

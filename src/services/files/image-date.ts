import { believable } from './document-date.ts';

/**
 * When a photo was taken, from its EXIF data (docs/time.md, "Three times"): DateTimeOriginal,
 * else CreateDate (EXIF's DateTimeDigitized), each with its OffsetTime tag when the camera wrote
 * one. Without an offset the camera's clock zone is unknown and the moment is read as UTC. The
 * EXIF block is found in JPEG (its APP1 segment), TIFF (the file is the block), PNG (eXIf) and
 * WebP (EXIF); other images say nothing here.
 *
 * Every offset is checked against the bytes before it is read and the directories walked are
 * bounded, so a malformed or hostile file costs a few reads and gives null, never an exception.
 */
export function imageDate(data: Buffer): string | null {
  const block = exifBlock(data);
  return block ? exifDate(block) : null;
}

const DATE_TIME_ORIGINAL = 0x9003;
const CREATE_DATE = 0x9004;
const OFFSET_TIME_ORIGINAL = 0x9011;
const OFFSET_TIME_DIGITIZED = 0x9012;
const EXIF_IFD = 0x8769;
const ASCII = 2;
const LONG = 4;
/** An IFD of more entries than this is not a camera's: it is not read. */
const MAX_ENTRIES = 1000;
const EXIF_HEADER = Buffer.from('Exif\0\0');

/** The TIFF structure holding the EXIF tags, as a view into `data`; null when there is none. */
function exifBlock(data: Buffer): Buffer | null {
  const fourCc = (at: number) => data.toString('latin1', at, at + 4);
  if (data.length >= 8 && (fourCc(0) === 'II*\0' || fourCc(0) === 'MM\0*')) return data;
  if (data.length >= 4 && data.readUInt16BE(0) === 0xffd8) return jpegExif(data);
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47) {
    // PNG chunks: length, type, data, CRC.
    for (let at = 8; at + 8 <= data.length; at += 12 + data.readUInt32BE(at)) {
      if (fourCc(at + 4) === 'eXIf') return clip(data, at + 8, data.readUInt32BE(at));
    }
    return null;
  }
  if (data.length >= 12 && fourCc(0) === 'RIFF' && fourCc(8) === 'WEBP') {
    // RIFF chunks: type, little-endian size, data padded to an even length.
    for (let at = 12; at + 8 <= data.length; at += 8 + data.readUInt32LE(at + 4) + (data.readUInt32LE(at + 4) & 1)) {
      if (fourCc(at) !== 'EXIF') continue;
      const chunk = clip(data, at + 8, data.readUInt32LE(at + 4));
      // Some writers keep JPEG's "Exif\0\0" header in front of the TIFF structure.
      return chunk && chunk.subarray(0, 6).equals(EXIF_HEADER) ? chunk.subarray(6) : chunk;
    }
  }
  return null;
}

/** The first APP1 segment that starts with "Exif\0\0", walking the segments up to the image data. */
function jpegExif(data: Buffer): Buffer | null {
  for (let at = 2; at + 4 <= data.length && data[at] === 0xff;) {
    const marker = data[at + 1]!;
    // Fill bytes before a marker, then the start of the scan (DA) or the end of the image (D9).
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return null;
    const length = data.readUInt16BE(at + 2);
    if (length < 2) return null;
    if (marker === 0xe1 && data.subarray(at + 4, at + 10).equals(EXIF_HEADER)) return clip(data, at + 10, length - 8);
    at += 2 + length;
  }
  return null;
}

/** `length` bytes from `start`, or null when they run past the end. */
const clip = (data: Buffer, start: number, length: number) => (length >= 0 && start + length <= data.length ? data.subarray(start, start + length) : null);

/** The date read from a TIFF structure's EXIF directory (IFD0 points to it). */
function exifDate(tiff: Buffer): string | null {
  if (tiff.length < 8) return null;
  const le = tiff.toString('latin1', 0, 2) === 'II';
  if (!le && tiff.toString('latin1', 0, 2) !== 'MM') return null;
  const u16 = (at: number) => (le ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (le ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  if (u16(2) !== 42) return null;

  /** The entries of the directory at `ifd` as tag → {type, count, where its value is}; empty when out of bounds. */
  const entries = (ifd: number) => {
    const found = new Map<number, { type: number; count: number; value: number }>();
    if (ifd < 8 || ifd + 2 > tiff.length) return found;
    const n = u16(ifd);
    if (n > MAX_ENTRIES) return found;
    for (let i = 0, e = ifd + 2; i < n && e + 12 <= tiff.length; i++, e += 12) {
      const type = u16(e + 2);
      const count = u32(e + 4);
      // A value of up to four bytes is held in the entry itself; a longer one at its offset.
      const size = type === ASCII ? count : 4;
      found.set(u16(e), { type, count, value: size <= 4 ? e + 8 : u32(e + 8) });
    }
    return found;
  };
  const text = (entry: { type: number; count: number; value: number } | undefined) => {
    if (!entry || entry.type !== ASCII || entry.count > 64 || entry.value + entry.count > tiff.length) return null;
    return tiff
      .toString('latin1', entry.value, entry.value + entry.count)
      .replace(/\0.*$/s, '')
      .trim();
  };

  const pointer = entries(u32(4)).get(EXIF_IFD);
  if (!pointer || pointer.type !== LONG || pointer.value + 4 > tiff.length) return null;
  const exif = entries(u32(pointer.value));
  return (
    exifMoment(text(exif.get(DATE_TIME_ORIGINAL)), text(exif.get(OFFSET_TIME_ORIGINAL))) ??
    exifMoment(text(exif.get(CREATE_DATE)), text(exif.get(OFFSET_TIME_DIGITIZED)))
  );
}

/**
 * An EXIF date, `YYYY:MM:DD HH:MM:SS`, and its offset, `+HH:MM`, as ISO 8601 when believable.
 * Cameras with an unset clock write zeros or blanks, and a day that does not exist (31 April) is
 * not rolled over into the next month: both are null.
 */
function exifMoment(date: string | null, offset: string | null): string | null {
  const m = date ? /^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(date) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const utc = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (utc.getUTCMonth() !== mo - 1 || utc.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return null;
  const zone = offset ? /^([+-])(\d{2}):(\d{2})$/.exec(offset) : null;
  const minutes = zone && Number(zone[2]) <= 14 && Number(zone[3]) <= 59 ? (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) : 0;
  return believable(new Date(utc.getTime() - minutes * 60_000));
}

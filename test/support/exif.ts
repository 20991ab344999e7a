import { crc32 } from 'node:zlib';

/**
 * EXIF data written into real images (no library here writes EXIF), after the layout of EXIF 2.32
 * and each container's own specification: a TIFF structure whose first directory (IFD0) points to
 * an EXIF directory holding the given ASCII tags, in either byte order; then that structure in a
 * JPEG's APP1 segment, a PNG's eXIf chunk or a WebP's EXIF chunk.
 */

export const TAG = { DateTimeOriginal: 0x9003, CreateDate: 0x9004, OffsetTimeOriginal: 0x9011, OffsetTimeDigitized: 0x9012 } as const;

/** A TIFF structure with IFD0 (one entry: the EXIF pointer) and an EXIF directory of ASCII `tags`. */
export function exifTiff(tags: Partial<Record<keyof typeof TAG, string>>, { bigEndian = false } = {}): Buffer {
  const entries = Object.entries(tags)
    .map(([name, value]) => ({ tag: TAG[name as keyof typeof TAG], value: Buffer.from(`${value}\0`, 'latin1') }))
    .sort((a, b) => a.tag - b.tag);
  const exifAt = 8 + 2 + 12 + 4;
  let dataAt = exifAt + 2 + 12 * entries.length + 4;
  const out = Buffer.alloc(dataAt + entries.reduce((n, e) => n + (e.value.length > 4 ? e.value.length : 0), 0));
  const u16 = (v: number, at: number) => (bigEndian ? out.writeUInt16BE(v, at) : out.writeUInt16LE(v, at));
  const u32 = (v: number, at: number) => (bigEndian ? out.writeUInt32BE(v, at) : out.writeUInt32LE(v, at));
  out.write(bigEndian ? 'MM' : 'II', 0, 'latin1');
  u16(42, 2);
  u32(8, 4);
  // IFD0: the EXIF pointer (0x8769, LONG, 1), then no next directory.
  u16(1, 8);
  u16(0x8769, 10);
  u16(4, 12);
  u32(1, 14);
  u32(exifAt, 18);
  u32(0, 22);
  u16(entries.length, exifAt);
  entries.forEach(({ tag, value }, i) => {
    const e = exifAt + 2 + 12 * i;
    u16(tag, e);
    u16(2, e + 2); // ASCII
    u32(value.length, e + 4);
    if (value.length <= 4) value.copy(out, e + 8);
    else {
      u32(dataAt, e + 8);
      value.copy(out, dataAt);
      dataAt += value.length;
    }
  });
  return out;
}

/** The JPEG with an APP1 "Exif" segment right after its start-of-image marker. */
export function inJpeg(jpeg: Buffer, tiff: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0xffe1, 0);
  head.writeUInt16BE(2 + 6 + tiff.length, 2);
  return Buffer.concat([jpeg.subarray(0, 2), head, Buffer.from('Exif\0\0', 'latin1'), tiff, jpeg.subarray(2)]);
}

/** The PNG with an eXIf chunk right after IHDR (which is 8 + 25 bytes in). */
export function inPng(png: Buffer, tiff: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(tiff.length, 0);
  head.write('eXIf', 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), tiff])), 0);
  return Buffer.concat([png.subarray(0, 33), head, tiff, crc, png.subarray(33)]);
}

/** A simple WebP (one VP8 or VP8L chunk) made extended: a VP8X chunk saying it has EXIF, the image, then the EXIF chunk. */
export function inWebp(webp: Buffer, tiff: Buffer, width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(18);
  vp8x.write('VP8X', 0, 'latin1');
  vp8x.writeUInt32LE(10, 4);
  vp8x.writeUInt8(0x08, 8); // the EXIF flag
  vp8x.writeUIntLE(width - 1, 12, 3);
  vp8x.writeUIntLE(height - 1, 15, 3);
  const chunk = Buffer.alloc(8);
  chunk.write('EXIF', 0, 'latin1');
  chunk.writeUInt32LE(tiff.length, 4);
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), vp8x, webp.subarray(12), chunk, tiff, Buffer.alloc(tiff.length & 1)]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

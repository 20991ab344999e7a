import { createCanvas } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { imageDate } from '../src/services/files/image-date.ts';
import { exifTiff, inJpeg, inPng, inWebp } from './support/exif.ts';

/**
 * When a photo was taken, from its EXIF data (docs/time.md, "Three times"), in real images drawn
 * by canvas with EXIF written into them (test/support/exif.ts); and malformed EXIF read without an
 * exception.
 */
const canvas = createCanvas(40, 30);
const jpeg = canvas.toBuffer('image/jpeg');
const png = canvas.toBuffer('image/png');
const webp = canvas.toBuffer('image/webp');
const taken = { DateTimeOriginal: '2021:07:14 09:30:05', OffsetTimeOriginal: '+02:00' };

describe('imageDate', () => {
  it('reads DateTimeOriginal with its offset from a JPEG, in either byte order', () => {
    expect(imageDate(inJpeg(jpeg, exifTiff(taken)))).toBe('2021-07-14T07:30:05.000Z');
    expect(imageDate(inJpeg(jpeg, exifTiff(taken, { bigEndian: true })))).toBe('2021-07-14T07:30:05.000Z');
    expect(imageDate(inJpeg(jpeg, exifTiff({ DateTimeOriginal: '2021:07:14 09:30:05', OffsetTimeOriginal: '-05:30' })))).toBe('2021-07-14T15:00:05.000Z');
  });

  it('reads it from a TIFF file, a PNG eXIf chunk and a WebP EXIF chunk', () => {
    expect(imageDate(exifTiff(taken))).toBe('2021-07-14T07:30:05.000Z');
    expect(imageDate(exifTiff(taken, { bigEndian: true }))).toBe('2021-07-14T07:30:05.000Z');
    expect(imageDate(inPng(png, exifTiff(taken)))).toBe('2021-07-14T07:30:05.000Z');
    expect(imageDate(inWebp(webp, exifTiff(taken), 40, 30))).toBe('2021-07-14T07:30:05.000Z');
    // A WebP EXIF chunk that keeps JPEG's "Exif\0\0" header in front.
    const withHeader = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), exifTiff(taken)]);
    expect(imageDate(inWebp(webp, withHeader, 40, 30))).toBe('2021-07-14T07:30:05.000Z');
  });

  it('prefers DateTimeOriginal, falls back on CreateDate, and reads a moment without an offset as UTC', () => {
    const both = { DateTimeOriginal: '2020:01:02 03:04:05', CreateDate: '2022:02:03 04:05:06', OffsetTimeDigitized: '+01:00' };
    expect(imageDate(inJpeg(jpeg, exifTiff(both)))).toBe('2020-01-02T03:04:05.000Z');
    expect(imageDate(inJpeg(jpeg, exifTiff({ CreateDate: '2022:02:03 04:05:06', OffsetTimeDigitized: '+01:00' })))).toBe('2022-02-03T03:05:06.000Z');
    // A camera whose clock was never set writes zeros or blanks.
    for (const unset of ['0000:00:00 00:00:00', '    :  :     :  :  ', ''])
      expect(imageDate(inJpeg(jpeg, exifTiff({ ...both, DateTimeOriginal: unset }))), unset).toBe('2022-02-03T03:05:06.000Z');
    // An offset that is no offset is ignored, not the date.
    expect(imageDate(inJpeg(jpeg, exifTiff({ DateTimeOriginal: '2020:01:02 03:04:05', OffsetTimeOriginal: '+99:00' })))).toBe('2020-01-02T03:04:05.000Z');
  });

  it('does not believe a day that does not exist, a time out of range, or a moment before 1971 or in the future', () => {
    for (const date of [
      '2023:02:30 10:00:00',
      '2023:04:31 10:00:00',
      '2023:13:01 10:00:00',
      '2023:01:01 24:00:00',
      '1900:01:01 00:00:00',
      '2099:01:01 00:00:00',
      '2023-01-01 10:00:00',
    ])
      expect(imageDate(inJpeg(jpeg, exifTiff({ DateTimeOriginal: date }))), date).toBeNull();
  });

  it('is null for images without EXIF, and for files that are no image', () => {
    for (const image of [jpeg, png, webp, canvas.toBuffer('image/avif'), Buffer.from('GIF89a'), Buffer.alloc(0), Buffer.from('hello')])
      expect(imageDate(image)).toBeNull();
  });

  it('reads malformed EXIF without an exception: cut short, offsets out of the file, huge counts, random damage', () => {
    const good = inJpeg(jpeg, exifTiff({ ...taken, CreateDate: '2022:02:03 04:05:06' }, { bigEndian: true }));
    // Cut at every length through the EXIF segment: null or the date, never an exception.
    for (let n = 0; n <= 200; n++) expect([null, '2021-07-14T07:30:05.000Z']).toContain(imageDate(good.subarray(0, n)));

    const tiff = exifTiff(taken);
    const damaged = (edit: (t: Buffer) => void) => {
      const t = Buffer.from(tiff);
      edit(t);
      return imageDate(inJpeg(jpeg, t));
    };
    expect(damaged((t) => t.writeUInt32LE(0xfffffff0, 4))).toBeNull(); // IFD0 past the end
    expect(damaged((t) => t.writeUInt32LE(0xfffffff0, 18))).toBeNull(); // EXIF directory past the end
    expect(damaged((t) => t.writeUInt32LE(8, 18))).toBeNull(); // EXIF pointer back to IFD0
    expect(damaged((t) => t.writeUInt16LE(0xffff, 26))).toBeNull(); // 65,535 entries claimed
    expect(damaged((t) => t.writeUInt32LE(0xfffffff0, 28 + 8))).toBeNull(); // a date stored past the end
    expect(damaged((t) => t.writeUInt32LE(0xfffffff0, 28 + 4))).toBeNull(); // a date of 4 GB
    expect(damaged((t) => t.writeUInt16LE(43, 2))).toBeNull(); // not TIFF's 42
    // A JPEG segment claiming more than the file holds, and a PNG chunk doing the same.
    const longSegment = Buffer.from(good);
    longSegment.writeUInt16BE(0xffff, 4);
    expect(imageDate(longSegment)).toBeNull();
    const longChunk = inPng(png, tiff);
    longChunk.writeUInt32BE(0xffffffff, 33);
    expect(imageDate(longChunk)).toBeNull();

    // Random bytes overwritten, 2,000 times (a fixed seed, so a failure repeats).
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const copy = Buffer.from(good.subarray(0, 160));
      for (let k = 0; k < 4; k++) copy[2 + Math.floor(random() * 158)] = Math.floor(random() * 256);
      const out = imageDate(copy);
      expect(out === null || !Number.isNaN(Date.parse(out))).toBe(true);
    }
  });
});

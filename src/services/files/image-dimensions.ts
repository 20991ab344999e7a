/**
 * The width and height an image declares in its header, read without decoding a pixel: what OCR
 * would have to hold in memory is known before it starts (docs/files.md, "What becomes text").
 * The formats OCR reads: PNG, JPEG, GIF, WebP, BMP and TIFF. Null when the header says nothing
 * readable (the reader then fails on it, within its deadline).
 */
export function imageDimensions(data: Buffer): { width: number; height: number } | null {
  const at = (offset: number, bytes: number) => data.length >= offset + bytes;
  // PNG: the IHDR chunk comes first.
  if (at(0, 24) && data.readUInt32BE(0) === 0x89504e47 && data.toString('latin1', 12, 16) === 'IHDR') {
    return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  }
  // GIF: the logical screen.
  if (at(0, 10) && data.toString('latin1', 0, 4) === 'GIF8') return { width: data.readUInt16LE(6), height: data.readUInt16LE(8) };
  // BMP: the info header (a negative height is a top-down bitmap).
  if (at(0, 26) && data.toString('latin1', 0, 2) === 'BM') return { width: Math.abs(data.readInt32LE(18)), height: Math.abs(data.readInt32LE(22)) };
  if (at(0, 30) && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') return webp(data);
  if (at(0, 4) && data.readUInt16BE(0) === 0xffd8) return jpeg(data);
  if (at(0, 8) && (data.toString('latin1', 0, 4) === 'II*\0' || data.toString('latin1', 0, 4) === 'MM\0*')) return tiff(data);
  return null;
}

function webp(data: Buffer) {
  const chunk = data.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: 1 + data.readUIntLE(24, 3), height: 1 + data.readUIntLE(27, 3) };
  if (chunk === 'VP8L') {
    const bits = data.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  if (chunk === 'VP8 ') return { width: data.readUInt16LE(26) & 0x3fff, height: data.readUInt16LE(28) & 0x3fff };
  return null;
}

/** The first start-of-frame marker's size, walking the segments. */
function jpeg(data: Buffer) {
  let i = 2;
  while (i + 9 < data.length) {
    if (data[i] !== 0xff) return null;
    const marker = data[i + 1]!;
    // SOF0 to SOF15, less DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: data.readUInt16BE(i + 7), height: data.readUInt16BE(i + 5) };
    }
    i += 2 + data.readUInt16BE(i + 2);
  }
  return null;
}

/** ImageWidth (256) and ImageLength (257) of the first image file directory. */
function tiff(data: Buffer) {
  const le = data[0] === 0x49;
  const u16 = (o: number) => (le ? data.readUInt16LE(o) : data.readUInt16BE(o));
  const u32 = (o: number) => (le ? data.readUInt32LE(o) : data.readUInt32BE(o));
  const ifd = u32(4);
  if (ifd + 2 > data.length) return null;
  const size: { width?: number; height?: number } = {};
  for (let n = u16(ifd), e = ifd + 2; n > 0 && e + 12 <= data.length; n--, e += 12) {
    const tag = u16(e);
    // SHORT (3) or LONG (4), held in the entry itself.
    const value = u16(e + 2) === 3 ? u16(e + 8) : u32(e + 8);
    if (tag === 256) size.width = value;
    if (tag === 257) size.height = value;
  }
  return size.width !== undefined && size.height !== undefined ? { width: size.width, height: size.height } : null;
}

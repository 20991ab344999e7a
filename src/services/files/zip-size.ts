import { createInflateRaw } from 'node:zlib';

/**
 * Whether a zip archive's entries inflate to more than `limit` bytes together. The sizes its
 * central directory declares are summed first (nothing inflated); as they can lie, the entries
 * are then inflated for real, counted and dropped as they stream, stopping at the limit: memory
 * stays flat whatever the archive holds. False when the bytes hold no readable central directory
 * (the reader then fails with its own reason).
 */
export async function unzipsPast(zip: Buffer, limit: number): Promise<boolean> {
  const entries = centralDirectory(zip);
  if (!entries) return false;
  if (entries.reduce((n, e) => n + e.size, 0) > limit) return true;
  let total = 0;
  for (const e of entries) {
    if (e.method !== 8) {
      total += e.compressed;
      continue;
    }
    const start = e.local + 30 + zip.readUInt16LE(e.local + 26) + zip.readUInt16LE(e.local + 28);
    const over = await inflatesPast(zip.subarray(start, start + e.compressed), limit - total);
    if (over === true) return true;
    total += over;
  }
  return total > limit;
}

interface Entry {
  method: number;
  compressed: number;
  size: number;
  local: number;
}

/** The entries the central directory lists; a size in ZIP64 form (0xFFFFFFFF) counts as 4 GiB. */
function centralDirectory(zip: Buffer): Entry[] | null {
  const end = endOfCentralDirectory(zip);
  if (end < 0) return null;
  const entries: Entry[] = [];
  let at = zip.readUInt32LE(end + 16);
  for (let i = zip.readUInt16LE(end + 10); i > 0; i--) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50) return null;
    const local = zip.readUInt32LE(at + 42);
    if (local + 30 > zip.length) return null;
    const size = zip.readUInt32LE(at + 24);
    entries.push({ method: zip.readUInt16LE(at + 10), compressed: zip.readUInt32LE(at + 20), size: size === 0xffffffff ? 2 ** 32 : size, local });
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}

/** Where the end-of-central-directory record starts: within the last 22 bytes plus a comment of at most 65,535. */
function endOfCentralDirectory(zip: Buffer): number {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) if (zip.readUInt32LE(at) === 0x06054b50) return at;
  return -1;
}

/** The bytes deflated data inflates to, or true past `room`; broken data counts what it gave. */
function inflatesPast(data: Buffer, room: number): Promise<number | true> {
  return new Promise((resolve) => {
    const inflate = createInflateRaw();
    let size = 0;
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > room) {
        inflate.destroy();
        resolve(true);
      }
    });
    inflate.on('end', () => resolve(size));
    inflate.on('error', () => resolve(size));
    inflate.end(data);
  });
}

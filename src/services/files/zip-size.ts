/**
 * The bytes a zip archive's entries declare once inflated, all together, read from its central
 * directory without inflating anything; null when the bytes hold no central directory (the
 * reader then fails with its own reason). A size in ZIP64 form (0xFFFFFFFF) counts as 4 GiB.
 * Declared sizes can lie: the reader's memory limit stops what this cannot (docs/contract.md, "Limits").
 */
export function unzippedSize(zip: Buffer): number | null {
  const end = endOfCentralDirectory(zip);
  if (end < 0) return null;
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  let total = 0;
  for (let i = 0; i < entries; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50) return null;
    const size = zip.readUInt32LE(at + 24);
    total += size === 0xffffffff ? 2 ** 32 : size;
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return total;
}

/** Where the end-of-central-directory record starts: within the last 22 bytes plus a comment of at most 65,535. */
function endOfCentralDirectory(zip: Buffer): number {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) if (zip.readUInt32LE(at) === 0x06054b50) return at;
  return -1;
}

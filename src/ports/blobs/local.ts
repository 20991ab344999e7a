import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, mkdtemp, open, readdir, rename, rm, rmdir, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from './blobs.ts';
import { checkBlobSignature, signBlobUrl, type SignedBlobUrl } from './signed-url.ts';

/** A key the store refuses: empty segments, `.` or `..`, control characters; it could escape the directory. */
export class InvalidBlobKeyError extends Error {}
/** A streamed upload went over its limit; nothing was stored. */
export class BlobTooLargeError extends Error {}
/** A streamed upload to a key that already holds a file; the file was left as it was. */
export class BlobExistsError extends Error {}

const DEFAULT_TYPE = 'application/octet-stream';
// A file starts with its content type and a newline, so the type and the bytes are written (and
// renamed into place) together: no sidecar that a crash could leave out of step.
const MAX_TYPE = 255;
const typeOf = (contentType: string) => (/^[\x20-\x7e]{1,255}$/.test(contentType) ? contentType : DEFAULT_TYPE);

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

function keySegments(key: string): string[] {
  const segments = key.split('/');
  if (key.length > 1024 || /[\\\u0000-\u001f\u007f]/.test(key) || segments.some((s) => s === '' || s === '.' || s === '..' || Buffer.byteLength(s) > 255)) {
    throw new InvalidBlobKeyError(`Invalid key: ${JSON.stringify(key.slice(0, 200))}`);
  }
  return segments;
}

/**
 * Files in a directory: `objects/<key>` holds each file, `tmp/` the uploads being written (same
 * file system, so the final rename is atomic and a reader never sees half a file). Presigned
 * URLs point at this server's `/v1/blobs/` routes (blob-routes.ts), signed with `signingKey`.
 */
export class LocalBlobStore implements BlobStore {
  private readonly objects: string;
  private readonly tmp: string;

  constructor(
    readonly root: string,
    private readonly signingKey: Buffer,
    /** A directory of its own that close() removes (the in-memory data dir of tests). */
    private readonly ephemeral = false,
  ) {
    this.objects = join(resolve(root), 'objects');
    this.tmp = join(resolve(root), 'tmp');
  }

  private pathOf(key: string): string {
    const path = join(this.objects, ...keySegments(key));
    if (!path.startsWith(this.objects + sep)) throw new InvalidBlobKeyError(`Invalid key: ${JSON.stringify(key.slice(0, 200))}`);
    return path;
  }

  private async tempFile(): Promise<string> {
    await mkdir(this.tmp, { recursive: true });
    return join(this.tmp, randomBytes(12).toString('hex'));
  }

  /** Moves a finished temp file into place; a concurrent delete may prune the new parent directory, so that is retried. */
  private async commit(temp: string, path: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await mkdir(dirname(path), { recursive: true });
      try {
        return await rename(temp, path);
      } catch (err) {
        if (!isMissing(err) || attempt === 3) {
          await rm(temp, { force: true });
          throw err;
        }
      }
    }
  }

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    const path = this.pathOf(key);
    const temp = await this.tempFile();
    try {
      await writeFile(temp, Buffer.concat([Buffer.from(`${typeOf(contentType)}\n`), body]), { flag: 'wx' });
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    await this.commit(temp, path);
  }

  /**
   * Writes a streamed upload, counting bytes as they arrive: past `maxBytes` it stops reading and
   * throws BlobTooLargeError, and nothing is stored. It creates the key, never replaces it (a
   * presigned upload writes once, docs/files.md): a key that holds a file, before the upload or
   * by the time it is written, throws BlobExistsError and the file stays as it was.
   */
  async putStream(key: string, body: AsyncIterable<Buffer>, contentType: string, maxBytes: number): Promise<void> {
    const path = this.pathOf(key);
    if (await this.head(key)) throw new BlobExistsError('A file was already uploaded at this key: an upload link writes once');
    const temp = await this.tempFile();
    let size = 0;
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          yield Buffer.from(`${typeOf(contentType)}\n`);
          for await (const chunk of source) {
            size += chunk.length;
            if (size > maxBytes) throw new BlobTooLargeError(`The file is larger than ${maxBytes} bytes`);
            yield chunk;
          }
        },
        createWriteStream(temp, { flags: 'wx' }),
      );
      // A hard link never replaces a file (rename would): of two uploads racing, the second fails here.
      await mkdir(dirname(path), { recursive: true });
      await link(temp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') err = new BlobExistsError('A file was already uploaded at this key: an upload link writes once');
      throw err;
    } finally {
      await rm(temp, { force: true });
    }
  }

  private async openFile(key: string): Promise<FileHandle | null> {
    try {
      return await open(this.pathOf(key), 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  /** The file's header: its content type, and where its bytes start and end. */
  private async header(handle: FileHandle, key: string): Promise<{ contentType: string; offset: number; size: number }> {
    const { size: fileSize } = await handle.stat();
    const buf = Buffer.alloc(MAX_TYPE + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
    if (nl < 0) throw new Error(`Corrupt stored file for ${key}: no content type header`);
    return { contentType: buf.subarray(0, nl).toString('latin1'), offset: nl + 1, size: fileSize - nl - 1 };
  }

  async get(key: string): Promise<{ body: Buffer; contentType: string } | null> {
    const handle = await this.openFile(key);
    if (!handle) return null;
    try {
      const file = await handle.readFile();
      const nl = file.indexOf(0x0a);
      if (nl < 0 || nl > MAX_TYPE) throw new Error(`Corrupt stored file for ${key}: no content type header`);
      return { body: file.subarray(nl + 1), contentType: file.subarray(0, nl).toString('latin1') };
    } finally {
      await handle.close();
    }
  }

  async head(key: string): Promise<{ size: number; contentType: string } | null> {
    const handle = await this.openFile(key);
    if (!handle) return null;
    try {
      const { size, contentType } = await this.header(handle, key);
      return { size, contentType };
    } finally {
      await handle.close();
    }
  }

  /** The file as a stream, for serving it without holding it in memory. */
  async openRead(key: string): Promise<{ stream: Readable; size: number; contentType: string } | null> {
    const handle = await this.openFile(key);
    if (!handle) return null;
    try {
      const { offset, size, contentType } = await this.header(handle, key);
      // The handle closes when the stream ends or is destroyed (a client that went away).
      return { stream: handle.createReadStream({ start: offset }), size, contentType };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Removes the now empty directories above a deleted file, up to the objects directory. */
  private async prune(dir: string): Promise<void> {
    while (dir.startsWith(this.objects + sep)) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty (or already gone): stop
      }
      dir = dirname(dir);
    }
  }

  async delete(keys: string[]): Promise<void> {
    const paths = keys.map((k) => this.pathOf(k));
    for (const path of paths) {
      try {
        await unlink(path);
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      await this.prune(dirname(path));
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    if (!prefix) throw new InvalidBlobKeyError('The prefix must not be empty');
    // A prefix is a directory part (whole segments) and the start of a name in it, as in S3.
    const cut = prefix.lastIndexOf('/');
    const dir = cut < 0 ? this.objects : this.pathOf(prefix.slice(0, cut));
    const start = prefix.slice(cut + 1);
    if (/[\\\u0000-\u001f\u007f]/.test(start)) throw new InvalidBlobKeyError(`Invalid prefix: ${JSON.stringify(prefix.slice(0, 200))}`);
    let entries: string[];
    try {
      entries = (await readdir(dir)).filter((name) => name.startsWith(start));
    } catch (err) {
      if (isMissing(err)) return 0;
      throw err;
    }
    let count = 0;
    for (const name of entries) {
      const path = join(dir, name);
      count += await countFiles(path);
      await rm(path, { recursive: true, force: true });
    }
    await this.prune(dir);
    return count;
  }

  async presign(op: 'get' | 'put', key: string, opts: { expiresInSeconds: number; contentType?: string; origin: string }): Promise<string> {
    this.pathOf(key);
    const expires = Math.floor(Date.now() / 1000) + opts.expiresInSeconds;
    return signBlobUrl(this.signingKey, opts.origin, {
      op,
      key,
      expires,
      type: op === 'put' && opts.contentType !== undefined ? typeOf(opts.contentType) : undefined,
    });
  }

  /** Why a presigned URL does not allow its operation, or null when it does. */
  checkSignature(url: SignedBlobUrl, sig: string): string | null {
    return checkBlobSignature(this.signingKey, url, sig);
  }

  async close(): Promise<void> {
    if (this.ephemeral) await rm(this.root, { recursive: true, force: true });
  }
}

async function countFiles(path: string): Promise<number> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    if (isMissing(err)) return 0;
    throw err;
  }
  if (!info.isDirectory()) return 1;
  let n = 0;
  for (const name of await readdir(path)) n += await countFiles(join(path, name));
  return n;
}

/** The store in `dir`, or (no directory: the in-memory data dir) in a fresh temporary directory removed on close. */
export async function openLocalBlobStore(dir: string | null, signingKey: Buffer): Promise<LocalBlobStore> {
  if (dir) {
    await mkdir(dir, { recursive: true });
    return new LocalBlobStore(dir, signingKey);
  }
  return new LocalBlobStore(await mkdtemp(join(tmpdir(), 'orgmem-files-')), signingKey, true);
}

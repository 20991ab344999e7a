import { newId } from '../../core/ids.ts';

/**
 * Where uploaded files live: a local directory or an S3 bucket (the platform's, or a tenant's own
 * bucket, docs/files.md). Keys are `{tenant_id}/{collection}/{uuid}/{filename}`.
 */
export interface BlobStore {
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** null when the key does not exist */
  get(key: string): Promise<{ body: Buffer; contentType: string } | null>;
  head(key: string): Promise<{ size: number; contentType: string } | null>;
  /** Missing keys are ignored. */
  delete(keys: string[]): Promise<void>;
  /** Deletes every key under the prefix; answers how many. */
  deletePrefix(prefix: string): Promise<number>;
  /**
   * An absolute URL that allows one operation on the key until it expires. `origin` (e.g.
   * http://host:port) is where this server is reached; S3 ignores it.
   */
  presign(op: 'get' | 'put', key: string, opts: { expiresInSeconds: number; contentType?: string; origin: string }): Promise<string>;
  /** Releases what the store holds (connections, a temporary directory); the store is not used after. */
  close(): Promise<void>;
}

const MAX_NAME = 200;

/**
 * A file name that is safe as the last key segment of any store: the basename only, with
 * control characters and everything outside a conservative set replaced, at most 200
 * characters (the extension kept), never empty and never `.` or `..`.
 */
function safeName(filename: string): string {
  const base = filename.split(/[/\\]/).pop() ?? '';
  let name = base.replace(/[^A-Za-z0-9._-]/g, '_');
  if (name.length > MAX_NAME) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = name.slice(0, MAX_NAME - ext.length) + ext;
  }
  return /^\.*$/.test(name) ? 'file' : name;
}

/** A new key for a file of the tenant's collection. */
export function fileKey(tenantId: string, collection: string, filename: string): string {
  return `${tenantId}/${collection}/${newId()}/${safeName(filename)}`;
}

/**
 * Whether `key` is a file key of the tenant (and of the collection, when given): the four
 * segments, none empty, `.` or `..`, and no control character or backslash anywhere. Keys that
 * clients send back (drop complete) and keys read from memory rows are checked with it before
 * the server touches them.
 */
export function isTenantKey(key: string, tenantId: string, collection?: string): boolean {
  const segments = key.split('/');
  if (segments.length !== 4 || /[\\\u0000-\u001f\u007f]/.test(key)) return false;
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return false;
  return segments[0] === tenantId && (collection === undefined || segments[1] === collection);
}

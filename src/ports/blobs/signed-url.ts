import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * The local store's presigned URLs: `/v1/blobs/{key}?op=&expires=&sig=` (plus `type=` when a
 * content type was signed), an HMAC-SHA256 over what the URL allows. The signing key is derived
 * from the master key, so URLs stay valid across restarts and no new secret has to be kept.
 */

export type BlobOp = 'get' | 'put';

export interface SignedBlobUrl {
  op: BlobOp;
  key: string;
  /** Unix seconds. */
  expires: number;
  /** The content type a PUT stores, when it was fixed at signing. */
  type?: string;
}

export const BLOB_ROUTE_PREFIX = '/v1/blobs/';

/** A key of its own for URL signatures, so a signature never doubles as any other MAC made with the master key. */
export const blobUrlSigningKey = (masterKey: Buffer): Buffer => createHmac('sha256', masterKey).update('orgmem blob urls').digest();

const mac = (signingKey: Buffer, u: SignedBlobUrl) =>
  createHmac('sha256', signingKey)
    .update([u.op, u.key, String(u.expires), u.type ?? ''].join('\n'))
    .digest();

/** The key as a URL path: each segment percent-encoded, the slashes kept. */
export const blobPath = (key: string) => BLOB_ROUTE_PREFIX + key.split('/').map(encodeURIComponent).join('/');

export function signBlobUrl(signingKey: Buffer, origin: string, u: SignedBlobUrl): string {
  const query = new URLSearchParams({ op: u.op, expires: String(u.expires) });
  if (u.type !== undefined) query.set('type', u.type);
  query.set('sig', mac(signingKey, u).toString('hex'));
  return `${origin.replace(/\/+$/, '')}${blobPath(u.key)}?${query}`;
}

/** Why a URL does not allow its operation, or null when it does. */
export function checkBlobSignature(signingKey: Buffer, u: SignedBlobUrl, sig: string, nowSeconds = Date.now() / 1000): string | null {
  const expected = mac(signingKey, u);
  const given = /^[0-9a-f]{64}$/.test(sig) ? Buffer.from(sig, 'hex') : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "The link's signature is not valid";
  if (!Number.isFinite(u.expires) || u.expires < nowSeconds) return 'The link has expired';
  return null;
}

import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkAddress, checkedLookup, hostOf, type TargetRule } from '../public-target.ts';
import type { BlobStore } from './blobs.ts';

export interface S3Options {
  /** For S3-compatible services (MinIO, R2...); AWS itself when not given. */
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** `endpoint/bucket/key` instead of `bucket.endpoint/key`; what most S3-compatible services need. */
  forcePathStyle: boolean;
  /** A tenant's own endpoint: connections only to the addresses this rule allows. */
  targets?: TargetRule;
  /** Per request; no limit when not given. */
  timeoutMs?: number;
  /** Tries per request (the SDK's default is 3). */
  maxAttempts?: number;
}

// DeleteObjects takes at most 1000 keys a call, as ListObjectsV2 answers at most 1000 a page.
const BATCH = 1000;

const isNotFound = (err: unknown) => err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound');

/** A bucket through the AWS SDK; the same store serves the platform's bucket and a tenant's own. */
export function s3BlobStore(opts: S3Options): BlobStore {
  const lookup = opts.targets && checkedLookup(opts.targets);
  const client = new S3Client({
    endpoint: opts.endpoint,
    region: opts.region,
    forcePathStyle: opts.forcePathStyle,
    // Without a key the SDK's own chain applies (environment, an instance or task role).
    credentials: opts.accessKeyId ? { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } : undefined,
    maxAttempts: opts.maxAttempts,
    // Checksums only where S3 requires them: S3-compatible services do not all accept the newer
    // ones, and a presigned PUT would otherwise carry the checksum of an empty body.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: opts.timeoutMs,
      requestTimeout: opts.timeoutMs,
      throwOnRequestTimeout: opts.timeoutMs !== undefined,
      httpAgent: new http.Agent({ keepAlive: true, lookup }),
      httpsAgent: new https.Agent({ keepAlive: true, lookup }),
    },
  });
  // The lookup sees host names only; an endpoint written as an address is checked here. The SDK
  // follows no redirects, so the endpoint is the only target.
  const host = opts.targets && opts.endpoint ? hostOf(new URL(opts.endpoint)) : '';
  if (host && isIP(host)) {
    const rule = opts.targets!;
    client.middlewareStack.add(
      (next) => async (args) => {
        checkAddress(rule, host, host);
        return next(args);
      },
      { step: 'initialize', name: 'checkEndpointAddress' },
    );
  }
  const Bucket = opts.bucket;

  const deleteBatch = async (keys: string[]) => {
    if (!keys.length) return;
    const res = await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
    // A multi-object delete answers 200 and lists the keys it could not delete.
    const failed = res.Errors?.filter((e) => e.Code !== 'NoSuchKey') ?? [];
    if (failed.length) {
      const first = failed[0]!;
      const err = new Error(`${first.Message ?? 'not deleted'} (${failed.length} of ${keys.length} keys not deleted, the first ${first.Key})`);
      err.name = first.Code ?? 'DeleteFailed';
      throw err;
    }
  };

  return {
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(key) {
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        const body = Buffer.from(await res.Body!.transformToByteArray());
        return { body, contentType: res.ContentType ?? 'application/octet-stream' };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async head(key) {
      try {
        const res = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return { size: res.ContentLength ?? 0, contentType: res.ContentType ?? 'application/octet-stream' };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async delete(keys) {
      for (let i = 0; i < keys.length; i += BATCH) await deleteBatch(keys.slice(i, i + BATCH));
    },
    async deletePrefix(prefix) {
      // An empty prefix would empty the whole bucket, which no caller means.
      if (!prefix) throw new Error('The prefix must not be empty');
      // Pages continue after the last key seen rather than from a continuation token, which some
      // S3-compatible services derive from positions that the deletions in between shift.
      let count = 0;
      let after: string | undefined;
      for (;;) {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, StartAfter: after, MaxKeys: BATCH }));
        const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => !!k);
        await deleteBatch(keys);
        count += keys.length;
        if (!page.IsTruncated || !keys.length) return count;
        after = keys[keys.length - 1];
      }
    },
    presign(op, key, { expiresInSeconds, contentType }) {
      // An upload URL writes once (docs/files.md): the PUT must carry `If-None-Match: *`, which is
      // signed into the URL, so the bucket refuses it (412) when the key already holds a file.
      const command =
        op === 'get' ? new GetObjectCommand({ Bucket, Key: key }) : new PutObjectCommand({ Bucket, Key: key, ContentType: contentType, IfNoneMatch: '*' });
      return getSignedUrl(client, command, { expiresIn: expiresInSeconds });
    },
    async close() {
      client.destroy();
    },
  };
}

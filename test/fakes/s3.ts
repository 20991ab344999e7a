import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// s3rver ships no types; this is the part of it used here (it is a Koa application).
interface KoaContext {
  query: Record<string, string | string[] | undefined>;
}
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>>;
  store: { deleteObject(bucket: string, key: string): Promise<void> };
}
const S3rver = createRequire(import.meta.url)('s3rver') as new (opts: Record<string, unknown>) => S3rverInstance;

export interface FakeS3 {
  endpoint: string;
  region: string;
  /** s3rver checks signatures against its one account. */
  accessKeyId: string;
  secretAccessKey: string;
  /** ORGMEM_S3_* making `bucket` the platform store. */
  env(bucket: string): Record<string, string>;
  close(): Promise<void>;
}

/** A real S3-speaking server (s3rver) on 127.0.0.1, with `buckets` created, in a temporary directory removed on close. */
export async function startFakeS3(buckets: string[]): Promise<FakeS3> {
  const directory = mkdtempSync(join(tmpdir(), 'orgmem-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  // s3rver seals ListObjectsV2 continuation tokens with DES, which OpenSSL 3 refuses, so a
  // truncated V2 listing fails. The stores page with start-after, never a token: served here
  // by s3rver's V1 listing, whose marker means the same and whose answer has the same shape.
  server.middleware.unshift(async (ctx, next) => {
    if (ctx.query['list-type'] === '2') {
      const { 'list-type': _v2, 'start-after': after, ...rest } = ctx.query;
      ctx.query = after === undefined ? rest : { ...rest, marker: after };
    }
    await next();
  });
  // A multi-object delete removes its keys in parallel, and each then prunes the directories
  // left empty: two prunes of one directory race, and the loser fails the whole request. The
  // objects themselves are gone by then, so a missing directory is no error.
  const deleteObject = server.store.deleteObject.bind(server.store);
  server.store.deleteObject = (bucket, key) =>
    deleteObject(bucket, key).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  return {
    endpoint,
    region: 'us-east-1',
    ...credentials,
    env: (bucket) => ({
      ORGMEM_S3_BUCKET: bucket,
      ORGMEM_S3_ENDPOINT: endpoint,
      ORGMEM_S3_ACCESS_KEY_ID: credentials.accessKeyId,
      ORGMEM_S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    }),
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

const accessDenied = (resource: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><Resource>${resource}</Resource></Error>`;

/** The answer to a multi-object delete: each key deleted, or refused as S3 reports it (200, an error per key). */
function deleteResult(keys: string[], denied: boolean) {
  const entries = keys.map((k) =>
    denied ? `<Error><Key>${k}</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>` : `<Deleted><Key>${k}</Key></Deleted>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${entries.join('')}</DeleteResult>`;
}

/**
 * A bucket whose credentials allow writes but not `deny` (path-style, any bucket name, no
 * signature check): what s3rver cannot imitate, for the storage self-test's later steps.
 */
export async function startDenyingS3(deny: 'read' | 'delete') {
  const objects = new Map<string, Buffer>();
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const path = decodeURIComponent(url.pathname);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && url.searchParams.has('delete')) {
        const keys = [
          ...Buffer.concat(chunks)
            .toString()
            .matchAll(/<Key>(.*?)<\/Key>/g),
        ].map((m) => m[1]!);
        if (deny !== 'delete') for (const k of keys) objects.delete(`${path}/${k}`);
        res.writeHead(200, { 'content-type': 'application/xml' }).end(deleteResult(keys, deny === 'delete'));
        return;
      }
      if (req.method === 'GET' && deny === 'read') {
        res.writeHead(403, { 'content-type': 'application/xml' }).end(accessDenied(path));
      } else if (req.method === 'PUT') {
        objects.set(path, Buffer.concat(chunks));
        res.writeHead(200, { etag: '"0"' }).end();
      } else if (req.method === 'GET' && objects.has(path)) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(objects.get(path));
      } else {
        res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code><Message>Not found</Message></Error>');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileKey, type BlobStore } from '../src/ports/blobs/blobs.ts';
import { s3BlobStore } from '../src/ports/blobs/s3.ts';
import { storeFor } from '../src/services/storage/tenant-store.ts';
import { startDenyingS3, startFakeS3, type FakeS3 } from './fakes/s3.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { closedPort } from './support/closed-port.ts';

const PATH = '/v1/memory/storage/config';
// s3rver knows one access key and does not check v4 signatures, so any secret passes: a
// distinctive one shows whether it ever leaks.
const SECRET = 'secret-key-that-must-never-be-shown-9f3a';

let s3: FakeS3;
let server: TestServer;
/** The test's own view of s3rver's buckets, straight through the SDK. */
let tenantBucket: BlobStore;

beforeAll(async () => {
  s3 = await startFakeS3(['tenant-bucket']);
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  tenantBucket = s3BlobStore({
    endpoint: s3.endpoint,
    bucket: 'tenant-bucket',
    region: s3.region,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: SECRET,
    forcePathStyle: true,
  });
});
afterAll(async () => {
  await tenantBucket?.close();
  await server?.close();
  await s3?.close();
});

const bucketConfig = (over: Record<string, unknown> = {}) => ({
  backend: 's3',
  endpoint_url: s3.endpoint,
  bucket: 'tenant-bucket',
  region: 'us-east-1',
  access_key: s3.accessKeyId,
  secret_key: SECRET,
  ...over,
});

/** Waits until `check` holds (a background job has run), failing after a few seconds. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const gone = (store: BlobStore, key: string) => async () => (await store.head(key)) === null;

describe("the tenant's own bucket", () => {
  it("is saved after a passing self-test, shown without its secret, and used for the tenant's files", async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('GET', PATH)).body).toEqual({
      configured: false,
      backend: 'platform',
      endpoint_url: null,
      bucket: null,
      region: null,
      access_key_masked: null,
      created_at: null,
      updated_at: null,
    });
    expect(await storeFor(server.app, t.id)).toBe(server.app.blobs);

    const put = await t.api('PUT', PATH, bucketConfig({ endpoint_url: `${s3.endpoint}/` }));
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ configured: true, backend: 's3', endpoint_url: s3.endpoint, bucket: 'tenant-bucket', region: 'us-east-1' });
    expect(put.body.access_key_masked).not.toContain(s3.accessKeyId);
    const get = await t.api('GET', PATH);
    expect(get.body).toEqual(put.body);
    for (const body of [put.body, get.body]) expect(JSON.stringify(body)).not.toContain(SECRET);
    const [row] = await server.app.db.query<{ secret_key_sealed: string }>('select * from storage_configs where tenant_id = $1', [t.id]);
    expect(JSON.stringify(row)).not.toContain(SECRET);
    expect(server.app.secrets.decrypt(row!.secret_key_sealed)).toBe(SECRET);

    // The probe object is gone again.
    expect(await tenantBucket.deletePrefix('.orgmem-probe/')).toBe(0);

    const store = await storeFor(server.app, t.id);
    expect(store).not.toBe(server.app.blobs);
    expect(await storeFor(server.app, t.id)).toBe(store);
    const key = fileKey(t.id, 'docs', 'mine.txt');
    await store.put(key, Buffer.from('in my bucket'), 'text/plain');
    expect((await tenantBucket.get(key))?.body.toString()).toBe('in my bucket');
    expect(await server.app.blobs.head(key)).toBeNull();

    // A new config means a new client, even with the old one cached.
    expect((await t.api('PUT', PATH, bucketConfig({ region: 'eu-west-1' }))).body.region).toBe('eu-west-1');
    expect(await storeFor(server.app, t.id)).not.toBe(store);

    expect((await t.api('DELETE', PATH)).status).toBe(204);
    expect((await t.api('GET', PATH)).body).toMatchObject({ configured: false, backend: 'platform' });
    expect(await storeFor(server.app, t.id)).toBe(server.app.blobs);
    expect((await t.api('DELETE', PATH)).status).toBe(204);
  });

  it('is not saved when a step of the self-test fails, and the answer names the step', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const refused = async (body: Record<string, unknown>, detail: RegExp) => {
      const res = await t.api('PUT', PATH, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.detail).toMatch(detail);
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
    };
    await refused(bucketConfig({ bucket: 'no-such-bucket' }), /^Storage self-test failed at write: NoSuchBucket: The specified bucket does not exist/);
    await refused(bucketConfig({ access_key: 'NOT-A-KEY' }), /^Storage self-test failed at write: InvalidAccessKeyId: /);
    await refused(bucketConfig({ endpoint_url: `http://127.0.0.1:${await closedPort()}` }), /^Storage self-test failed at write: .*ECONNREFUSED/);

    const denyRead = await startDenyingS3('read');
    const denyDelete = await startDenyingS3('delete');
    try {
      await refused(bucketConfig({ endpoint_url: denyRead.endpoint }), /^Storage self-test failed at read: AccessDenied: Access Denied$/);
      await refused(
        bucketConfig({ endpoint_url: denyDelete.endpoint }),
        /^Storage self-test failed at delete: AccessDenied: Access Denied \(1 of 1 keys not deleted, the first \.orgmem-probe\/[0-9a-f-]{36}\)$/,
      );
      // The probe went through the fake's write, so the test reached the failing step for real.
      expect([...denyDelete.objects.keys()]).toEqual([expect.stringMatching(/^\/tenant-bucket\/\.orgmem-probe\/[0-9a-f-]{36}$/)]);
    } finally {
      await denyRead.close();
      await denyDelete.close();
    }
    expect((await t.api('GET', PATH)).body.configured).toBe(false);

    // A failed PUT leaves a saved config as it was.
    expect((await t.api('PUT', PATH, bucketConfig())).status).toBe(200);
    await refused(bucketConfig({ bucket: 'no-such-bucket' }), /at write/);
    expect((await t.api('GET', PATH)).body.bucket).toBe('tenant-bucket');
  });

  it('checks its input and needs a key that may write', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const { bucket: _bucket, ...noBucket } = bucketConfig();
    const missing = await t.api('PUT', PATH, noBucket);
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].path).toBe('bucket');
    expect((await t.api('PUT', PATH, bucketConfig({ backend: 'gcs' }))).status).toBe(422);
    expect((await t.api('PUT', PATH, bucketConfig({ endpoint_url: 'ftp://example.com' }))).status).toBe(422);
    expect((await t.api('PUT', PATH, bucketConfig({ bucket: 'a/b' }))).status).toBe(422);

    const ro = await t.newKey('reader', true);
    expect((await t.api('GET', PATH, undefined, ro.key)).status).toBe(200);
    expect((await t.api('PUT', PATH, bucketConfig(), ro.key)).status).toBe(403);
    expect((await t.api('DELETE', PATH, undefined, ro.key)).status).toBe(403);
    expect((await t.api('GET', PATH)).body.configured).toBe(false);
  });
});

describe('files removed with what held them', () => {
  const memory = async (t: Tenant, collection: string, text: string, metadata: Record<string, unknown> = {}) => {
    const res = await t.api('POST', `/v1/memory/collections/${collection}/memories`, { text, metadata });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const withImages = async (t: Tenant, id: string, keys: string[]) => {
    const images = keys.map((key, index) => ({ index, filename: `f${index}.png`, content_type: 'image/png', size: 1, caption: null, key }));
    await server.app.db.query('update memories set images = $3::jsonb where tenant_id = $1 and id = $2', [t.id, id, images]);
  };
  const stored = async (store: BlobStore, key: string) => {
    await store.put(key, Buffer.from(key), 'application/octet-stream');
    return key;
  };

  it('a deleted memory takes its images and, with the last chunk of a file, that file', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const other = await newTenant(server.url, server.adminKey);
    const blobs = server.app.blobs;
    const image = await stored(blobs, fileKey(t.id, 'c', 'photo.png'));
    // A key of another tenant written into this tenant's row is never touched.
    const foreign = await stored(blobs, fileKey(other.id, 'c', 'theirs.png'));
    const a = await memory(t, 'c', 'first memory with an image');
    await withImages(t, a, [image, foreign]);

    expect((await t.api('DELETE', `/v1/memory/collections/c/memories/${a}`)).status).toBe(204);
    await eventually(gone(blobs, image), 'the image is deleted');

    // Two chunks of one dropped file share its key.
    const source = await stored(blobs, fileKey(t.id, 'c', 'report.pdf'));
    const chunk1 = await memory(t, 'c', 'report chunk one', { key: source, filename: 'report.pdf' });
    const chunk2 = await memory(t, 'c', 'report chunk two', { key: source, filename: 'report.pdf' });
    expect((await t.api('DELETE', `/v1/memory/collections/c/memories/${chunk1}`)).status).toBe(204);
    // A later deletion's file is gone, the shared file is not: its other chunk still uses it.
    const marker = await stored(blobs, fileKey(t.id, 'c', 'marker.png'));
    const b = await memory(t, 'c', 'memory with a marker image');
    await withImages(t, b, [marker]);
    expect((await t.api('DELETE', `/v1/memory/collections/c/memories/${b}`)).status).toBe(204);
    await eventually(gone(blobs, marker), 'the marker is deleted');
    expect(await blobs.head(source)).not.toBeNull();

    expect((await t.api('DELETE', `/v1/memory/collections/c/memories/${chunk2}`)).status).toBe(204);
    await eventually(gone(blobs, source), 'the file of the last chunk is deleted');
    expect(await blobs.head(foreign)).not.toBeNull();
  });

  it('forget removes the files of the memories it deletes', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const image = await stored(server.app.blobs, fileKey(t.id, 'f', 'kept-until-forgotten.png'));
    const id = await memory(t, 'f', 'the sky over the harbour was violet');
    await withImages(t, id, [image]);
    const res = await t.api('POST', '/v1/memory/collections/f/forget', { query: 'the sky over the harbour was violet', min_score: 0.9 });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).toContain(id);
    await eventually(gone(server.app.blobs, image), "the forgotten memory's image is deleted");
  });

  it("dedup removes the files of the duplicates it deletes, and keeps the keeper's", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const blobs = server.app.blobs;
    const text = 'the quarterly report is due on friday';
    const keeperImage = await stored(blobs, fileKey(t.id, 'd', 'keeper.png'));
    const duplicateImage = await stored(blobs, fileKey(t.id, 'd', 'duplicate.png'));
    const keeper = (await t.api('POST', '/v1/memory/collections/d/memories', { text, importance: 0.9 })).body.id as string;
    const duplicate = (await t.api('POST', '/v1/memory/collections/d/memories', { text, importance: 0.1 })).body.id as string;
    await withImages(t, keeper, [keeperImage]);
    await withImages(t, duplicate, [duplicateImage]);
    const res = await t.api('POST', '/v1/memory/collections/d/dedup', { dry_run: false });
    expect(res.body).toEqual({ deleted: 1, ids: [duplicate] });
    await eventually(gone(blobs, duplicateImage), "the duplicate's image is deleted");
    expect(await blobs.head(keeperImage)).not.toBeNull();
  });

  it('a deleted collection takes the files of all its memories, not those still used elsewhere', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const blobs = server.app.blobs;
    const image = await stored(blobs, fileKey(t.id, 'gone', 'a.png'));
    const source = await stored(blobs, fileKey(t.id, 'gone', 'doc.pdf'));
    const shared = await stored(blobs, fileKey(t.id, 'gone', 'shared.pdf'));
    await withImages(t, await memory(t, 'gone', 'with an image'), [image]);
    await memory(t, 'gone', 'chunk of doc', { key: source });
    await memory(t, 'gone', 'chunk of shared', { key: shared });
    // Moved to another collection: the file it came from is still in use.
    const moved = await memory(t, 'gone', 'moved chunk of shared', { key: shared });
    expect((await t.api('POST', `/v1/memory/collections/gone/memories/${moved}/move`, { to_collection: 'kept' })).status).toBe(200);

    expect((await t.api('DELETE', '/v1/memory/collections/gone')).status).toBe(204);
    await eventually(async () => (await gone(blobs, image)()) && (await gone(blobs, source)()), "the collection's files are deleted");
    expect(await blobs.head(shared)).not.toBeNull();
  });

  it("a memory's files are deleted from the tenant's own bucket", async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', PATH, bucketConfig())).status).toBe(200);
    const own = await stored(tenantBucket, fileKey(t.id, 'c', 'own.png'));
    // Written to the platform's store before the tenant switched.
    const earlier = await stored(server.app.blobs, fileKey(t.id, 'c', 'earlier.png'));
    const id = await memory(t, 'c', 'memory with files in two stores');
    await withImages(t, id, [own, earlier]);
    expect((await t.api('DELETE', `/v1/memory/collections/c/memories/${id}`)).status).toBe(204);
    await eventually(async () => (await gone(tenantBucket, own)()) && (await gone(server.app.blobs, earlier)()), 'both files are deleted');
  });

  it("a deleted account takes every file under its prefix, in its own bucket and the platform's", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const other = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', PATH, bucketConfig())).status).toBe(200);
    const own = [await stored(tenantBucket, fileKey(t.id, 'a', 'x.txt')), await stored(tenantBucket, fileKey(t.id, 'b', 'y.txt'))];
    const platform = await stored(server.app.blobs, fileKey(t.id, 'a', 'z.txt'));
    const theirs = [await stored(server.app.blobs, fileKey(other.id, 'a', 'x.txt')), await stored(tenantBucket, fileKey(other.id, 'a', 'x.txt'))];

    expect((await t.api('POST', '/v1/memory/admin/delete-account', { confirm: t.name })).status).toBe(200);
    for (const key of own) expect(await tenantBucket.head(key)).toBeNull();
    expect(await server.app.blobs.head(platform)).toBeNull();
    expect(await server.app.blobs.head(theirs[0]!)).not.toBeNull();
    expect(await tenantBucket.head(theirs[1]!)).not.toBeNull();
    expect(await server.app.db.query('select 1 from storage_configs where tenant_id = $1', [t.id])).toEqual([]);
  });
});

describe("the tenant's own bucket in production mode", () => {
  it('refuses a private endpoint, when saving it and when connecting to it', async () => {
    const strict = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_PRODUCTION: '1' }, { worker: false });
    try {
      const t = await newTenant(strict.url, strict.adminKey);
      const res = await t.api('PUT', PATH, bucketConfig());
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^The storage endpoint is not allowed: .*127\.0\.0\.1/);
      expect((await t.api('GET', PATH)).body.configured).toBe(false);

      // A config saved before (or by name, resolved later) still never reaches a private address.
      const { port } = new URL(s3.endpoint);
      for (const endpoint of [s3.endpoint, `http://localhost:${port}`]) {
        await strict.app.db.query(
          `insert into storage_configs (tenant_id, backend, endpoint_url, bucket, region, access_key_sealed, secret_key_sealed)
           values ($1, 's3', $2, 'tenant-bucket', 'us-east-1', $3, $4)
           on conflict (tenant_id) do update set endpoint_url = excluded.endpoint_url, updated_at = now()`,
          [t.id, endpoint, strict.app.secrets.encrypt(s3.accessKeyId), strict.app.secrets.encrypt(SECRET)],
        );
        const store = await storeFor(strict.app, t.id);
        await expect(store.put(fileKey(t.id, 'c', 'x.txt'), Buffer.from('x'), 'text/plain'), endpoint).rejects.toThrow(
          /private, loopback or other internal address/,
        );
      }
    } finally {
      await strict.close();
    }
  }, 120_000);
});

import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileKey, isTenantKey, type BlobStore } from '../src/ports/blobs/blobs.ts';
import { InvalidBlobKeyError, LocalBlobStore } from '../src/ports/blobs/local.ts';
import { MAX_FILE_BYTES } from '../src/schemas/files.ts';
import { startFakeS3, type FakeS3 } from './fakes/s3.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * The BlobStore contract, the same cases against the local directory and S3 (s3rver), each
 * the platform store of a real server: presigned URLs are fetched over HTTP like a client would.
 */

const uniquePrefix = () => `t${randomBytes(6).toString('hex')}/`;

describe.each(['local', 's3'] as const)('the %s blob store', (kind) => {
  let server: TestServer;
  let s3: FakeS3 | undefined;
  let store: BlobStore;

  beforeAll(async () => {
    if (kind === 's3') s3 = await startFakeS3(['platform-files']);
    server = await startServer(s3 ? s3.env('platform-files') : {}, { worker: false });
    store = server.app.blobs;
  });
  afterAll(async () => {
    await server?.close();
    await s3?.close();
  });

  it('is the store the configuration names', () => {
    expect(store instanceof LocalBlobStore).toBe(kind === 'local');
  });

  it('stores bytes with their content type, and answers null for what it does not hold', async () => {
    const key = `${uniquePrefix()}c/u/photo.png`;
    const body = Buffer.concat([Buffer.from([0, 10, 13, 255]), randomBytes(5000)]);
    await store.put(key, body, 'image/png');
    const got = await store.get(key);
    expect(got?.contentType).toBe('image/png');
    expect(got?.body.equals(body)).toBe(true);
    expect(await store.head(key)).toEqual({ size: body.length, contentType: 'image/png' });

    await store.put(key, Buffer.from('replaced'), 'text/plain');
    expect((await store.get(key))?.body.toString()).toBe('replaced');
    expect(await store.head(key)).toEqual({ size: 8, contentType: 'text/plain' });

    expect(await store.get(`${uniquePrefix()}c/u/missing`)).toBeNull();
    expect(await store.head(`${uniquePrefix()}c/u/missing`)).toBeNull();
  });

  it('stores an empty file', async () => {
    const key = `${uniquePrefix()}c/u/empty.txt`;
    await store.put(key, Buffer.alloc(0), 'text/plain');
    expect(await store.head(key)).toEqual({ size: 0, contentType: 'text/plain' });
    expect((await store.get(key))?.body.length).toBe(0);
  });

  it('deletes the keys given and ignores missing ones', async () => {
    const p = uniquePrefix();
    await store.put(`${p}c/1/a`, Buffer.from('a'), 'text/plain');
    await store.put(`${p}c/2/b`, Buffer.from('b'), 'text/plain');
    await store.delete([`${p}c/1/a`, `${p}c/9/never-there`]);
    await store.delete([]);
    expect(await store.get(`${p}c/1/a`)).toBeNull();
    expect((await store.get(`${p}c/2/b`))?.body.toString()).toBe('b');
  });

  it('deletes everything under a prefix, and nothing beside it', async () => {
    const p = uniquePrefix();
    const inside = [`${p}c/1/a`, `${p}c/2/b`, `${p}d/3/c`];
    // Shares the prefix's characters but not its segment: a prefix ending in "/" must not reach it.
    const beside = `${p.slice(0, -1)}x/c/1/a`;
    for (const k of [...inside, beside]) await store.put(k, Buffer.from(k), 'text/plain');
    expect(await store.deletePrefix(`${p}c/`)).toBe(2);
    expect(await store.get(`${p}c/1/a`)).toBeNull();
    expect(await store.get(`${p}d/3/c`)).not.toBeNull();
    expect(await store.deletePrefix(p)).toBe(1);
    expect(await store.deletePrefix(p)).toBe(0);
    expect((await store.get(beside))?.body.toString()).toBe(beside);
    await expect(store.deletePrefix('')).rejects.toThrow(/empty/);
  });

  it('deletes a prefix holding more keys than one listing page', async () => {
    const p = uniquePrefix();
    const keys = Array.from({ length: 1_005 }, (_, i) => `${p}c/${i}/f`);
    for (let i = 0; i < keys.length; i += 25) await Promise.all(keys.slice(i, i + 25).map((k) => store.put(k, Buffer.from('x'), 'text/plain')));
    expect(await store.deletePrefix(p)).toBe(1_005);
    expect(await store.head(keys[1_004]!)).toBeNull();
    expect(await store.head(keys[0]!)).toBeNull();
  });

  it('presigns a download and an upload that a plain HTTP client can use', async () => {
    const key = `${uniquePrefix()}c/u/report.pdf`;
    const body = randomBytes(3000);
    const putUrl = await store.presign('put', key, { expiresInSeconds: 300, contentType: 'application/pdf', origin: server.url });
    const put = await fetch(putUrl, { method: 'PUT', body, headers: { 'content-type': 'application/pdf' } });
    expect(put.status).toBe(200);
    expect(await store.head(key)).toEqual({ size: 3000, contentType: 'application/pdf' });

    const getUrl = await store.presign('get', key, { expiresInSeconds: 300, origin: server.url });
    const got = await fetch(getUrl);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
  });

  it('presigns keys whose file name needs escaping in a URL', async () => {
    const key = `${uniquePrefix()}c/u/a%20b+c&d=e.txt`;
    await store.put(key, Buffer.from('escaped'), 'text/plain');
    const got = await fetch(await store.presign('get', key, { expiresInSeconds: 60, origin: server.url }));
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('escaped');
  });
});

describe('the local store', () => {
  let server: TestServer;
  let store: LocalBlobStore;

  beforeAll(async () => {
    server = await startServer({}, { worker: false });
    store = server.app.blobs as LocalBlobStore;
  });
  afterAll(async () => {
    const root = store.root;
    await server?.close();
    // The in-memory data dir's store lives in a temporary directory that closing removes.
    expect(existsSync(root)).toBe(false);
  });

  const url = async (op: 'get' | 'put', key: string, expiresInSeconds = 300) => new URL(await store.presign(op, key, { expiresInSeconds, origin: server.url }));

  it('answers 403 for an expired, tampered or misused link, and 404 for a missing file', async () => {
    const key = `${uniquePrefix()}c/u/f.txt`;
    await store.put(key, Buffer.from('secret'), 'text/plain');

    const expired = await fetch(await url('get', key, -5));
    expect(expired.status).toBe(403);
    expect((await expired.json()).detail).toMatch(/expired/);

    const tampered = await url('get', key);
    const sig = tampered.searchParams.get('sig')!;
    tampered.searchParams.set('sig', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    const bad = await fetch(tampered);
    expect(bad.status).toBe(403);
    expect((await bad.json()).detail).toMatch(/signature/);

    // A valid signature moved to another key, or with a later expiry, is no longer valid.
    const other = `${uniquePrefix()}c/u/f.txt`;
    await store.put(other, Buffer.from('other'), 'text/plain');
    const moved = await url('get', key);
    moved.pathname = `/v1/blobs/${other}`;
    expect((await fetch(moved)).status).toBe(403);
    const extended = await url('get', key);
    extended.searchParams.set('expires', String(Number(extended.searchParams.get('expires')) + 3600));
    expect((await fetch(extended)).status).toBe(403);

    // A download link does not upload, nor an upload link download.
    expect((await fetch(await url('get', key), { method: 'PUT', body: 'overwritten' })).status).toBe(403);
    expect((await fetch(await url('put', key))).status).toBe(403);
    expect((await fetch(`${server.url}/v1/blobs/${key}`)).status).toBe(403);
    expect((await store.get(key))?.body.toString()).toBe('secret');

    const missing = await fetch(await url('get', `${uniquePrefix()}c/u/none`));
    expect(missing.status).toBe(404);
    expect((await missing.json()).detail).toMatch(/No such file/);
  });

  it('serves files so that a browser neither sniffs them nor runs them on the API origin', async () => {
    const key = `${uniquePrefix()}c/u/page.html`;
    await store.put(key, Buffer.from('<script>alert(1)</script>'), 'text/html');
    const res = await fetch(await url('get', key));
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/sandbox/);
  });

  it('stores an upload with its request content type, or the one fixed at signing', async () => {
    const key = `${uniquePrefix()}c/u/notes.md`;
    expect((await fetch(await url('put', key), { method: 'PUT', body: '# hi', headers: { 'content-type': 'text/markdown' } })).status).toBe(200);
    expect(await store.head(key)).toEqual({ size: 4, contentType: 'text/markdown' });

    // Another key: a stored key takes no second PUT (test/drop-integrity.test.ts).
    const other = `${uniquePrefix()}c/u/notes.txt`;
    const fixed = await store.presign('put', other, { expiresInSeconds: 60, contentType: 'text/plain', origin: server.url });
    expect((await fetch(fixed, { method: 'PUT', body: 'plain', headers: { 'content-type': 'text/html' } })).status).toBe(200);
    expect(await store.head(other)).toEqual({ size: 5, contentType: 'text/plain' });
  });

  it('refuses an upload over 10 MB with 413 and stores nothing, whether its length is declared or streamed', async () => {
    const tmp = join(store.root, 'tmp');
    const declared = `${uniquePrefix()}c/u/big.bin`;
    const res = await fetch(await url('put', declared), { method: 'PUT', body: Buffer.alloc(MAX_FILE_BYTES + 1) });
    expect(res.status).toBe(413);
    expect((await res.json()).detail).toMatch(/larger than 10485760 bytes/);
    expect(await store.head(declared)).toBeNull();

    // Chunked, no length: the limit is found while the bytes arrive.
    const streamed = `${uniquePrefix()}c/u/big.bin`;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= MAX_FILE_BYTES + chunk.length) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const chunked = await fetch(await url('put', streamed), { method: 'PUT', body, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await store.head(streamed)).toBeNull();
    expect(readdirSync(tmp)).toEqual([]);

    // Exactly the limit is allowed.
    const atLimit = `${uniquePrefix()}c/u/max.bin`;
    expect((await fetch(await url('put', atLimit), { method: 'PUT', body: Buffer.alloc(MAX_FILE_BYTES, 1) })).status).toBe(200);
    expect((await store.head(atLimit))?.size).toBe(MAX_FILE_BYTES);
  });

  it('refuses keys that could leave its directory', async () => {
    for (const key of ['../escape', 'a/../../escape', '/abs/path', 'a//b', 'a/./b', 'a\\..\\b', 'a/b\u0000c', 'a/', '']) {
      await expect(store.put(key, Buffer.from('x'), 'text/plain'), key).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.get(key), key).rejects.toBeInstanceOf(InvalidBlobKeyError);
      await expect(store.presign('get', key, { expiresInSeconds: 60, origin: server.url }), key).rejects.toBeInstanceOf(InvalidBlobKeyError);
    }
    await expect(store.deletePrefix('../')).rejects.toBeInstanceOf(InvalidBlobKeyError);
    expect(existsSync(join(store.root, '..', 'escape'))).toBe(false);
    // Over HTTP, a path that is not the signed key never gets past the signature.
    expect((await fetch(`${server.url}/v1/blobs/..%2F..%2Fetc%2Fpasswd?op=get&expires=9999999999&sig=${'0'.repeat(64)}`)).status).toBe(403);
  });

  it('leaves no empty directories behind a deleted file', async () => {
    const p = uniquePrefix();
    await store.put(`${p}c/u/f`, Buffer.from('x'), 'text/plain');
    await store.put(`${p}c/v/g`, Buffer.from('y'), 'text/plain');
    await store.delete([`${p}c/u/f`]);
    expect(readdirSync(join(store.root, 'objects', p, 'c'))).toEqual(['v']);
    await store.delete([`${p}c/v/g`]);
    expect(existsSync(join(store.root, 'objects', p))).toBe(false);
  });
});

describe('file keys', () => {
  const tenant = '0190a0b0-0000-7000-8000-000000000001';

  it('are {tenant}/{collection}/{uuid}/{safe file name}', () => {
    const key = fileKey(tenant, 'docs', 'Report 2024.pdf');
    expect(key).toMatch(new RegExp(`^${tenant}/docs/[0-9a-f-]{36}/Report_2024\\.pdf$`));
    expect(isTenantKey(key, tenant, 'docs')).toBe(true);
    expect(fileKey(tenant, 'docs', 'a.pdf')).not.toBe(fileKey(tenant, 'docs', 'a.pdf'));
  });

  it('keep only a safe base name, never empty, at most 200 characters with the extension kept', () => {
    const name = (f: string) => fileKey(tenant, 'c', f).split('/')[3];
    expect(name('../../etc/passwd')).toBe('passwd');
    expect(name('C:\\Users\\me\\notes.txt')).toBe('notes.txt');
    expect(name('a\u0000b\nc\u007f.txt')).toBe('a_b_c_.txt');
    expect(name('résumé.pdf')).toBe('r_sum_.pdf');
    expect(name('')).toBe('file');
    expect(name('..')).toBe('file');
    expect(name('dir/')).toBe('file');
    const long = name(`${'x'.repeat(300)}.docx`)!;
    expect(long).toHaveLength(200);
    expect(long.endsWith('.docx')).toBe(true);
    for (const f of ['a/b', 'a\\b', '..', '.', '\u0000', 'x'.repeat(500)]) expect(isTenantKey(fileKey(tenant, 'c', f), tenant, 'c')).toBe(true);
  });

  it('belong to a tenant only with exactly four clean segments under its id', () => {
    const other = '0190a0b0-0000-7000-8000-000000000002';
    expect(isTenantKey(`${tenant}/c/u/f.txt`, tenant)).toBe(true);
    expect(isTenantKey(`${tenant}/c/u/f.txt`, tenant, 'c')).toBe(true);
    expect(isTenantKey(`${tenant}/c/u/f.txt`, tenant, 'd')).toBe(false);
    expect(isTenantKey(`${other}/c/u/f.txt`, tenant)).toBe(false);
    expect(isTenantKey(`${tenant}x/c/u/f.txt`, tenant)).toBe(false);
    for (const bad of [
      `${tenant}/c/u`,
      `${tenant}/c/u/f/g`,
      `${tenant}/c//f`,
      `${tenant}/c/../f`,
      `${tenant}/../u/f`,
      `${tenant}/c/u/..`,
      `${tenant}/c/u/a\\b`,
      `${tenant}/c/u/a\u0000`,
      `/${tenant}/c/u`,
    ]) {
      expect(isTenantKey(bad, tenant), bad).toBe(false);
    }
  });
});

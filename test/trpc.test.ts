import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../procedures/index.ts';
import type { AppRouter } from '../trpc/router.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';

const { url, adminKey } = shared();
let t: Tenant;

const client = (key: string) => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${key}` } })] });

beforeAll(async () => {
  t = await newTenant(url, adminKey);
});

describe('tRPC client typed by AppRouter', () => {
  it('stores, reads, lists and changes memories', async () => {
    const api = client(t.key);
    const created = await api.memories.create.mutate({ collection: 'rpc', text: 'tRPC stored this', importance: 0.9 });
    // Typed output: these property accesses are checked by the compiler.
    expect(created.collection).toBe('rpc');
    expect(created.importance).toBe(0.9);
    const got = await api.memories.get.query({ collection: 'rpc', id: created.id });
    expect(got.text).toBe('tRPC stored this');
    const [list, collections] = await Promise.all([api.memories.list.query({ collection: 'rpc' }), api.collections.list.query({})]);
    expect(list.map((m) => m.id)).toEqual([created.id]);
    expect(collections[0]!.memory_count).toBe(1);
    const pinned = await api.memories.pin.mutate({ collection: 'rpc', id: created.id, pinned: true });
    expect(pinned.pinned).toBe(true);
    const bulk = await api.memories.bulk.mutate({ collection: 'rpc', items: [{ text: 'a' }, { text: 'b' }] });
    expect(bulk.created).toBe(2);
  });

  it("signs a file's link for the server the request came to, as REST does", async () => {
    const api = client(t.key);
    const memory = await api.memories.create.mutate({ collection: 'rpc-files', text: 'a memory with a file' });
    const data = Buffer.from('the attached notes');
    const attached = await api.memories.attach.mutate({
      collection: 'rpc-files',
      id: memory.id,
      files: [{ filename: 'notes.txt', content_type: 'text/plain', data: data.toString('base64') }],
    });
    const got = await api.memories.get.query({ collection: 'rpc-files', id: memory.id });
    for (const link of [attached.images[0]?.url, got.images[0]?.url]) {
      expect(link?.startsWith(`${url}/v1/blobs/`), link ?? 'no link').toBe(true);
      const file = await fetch(link!);
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer())).toEqual(data);
    }
  });

  it('maps errors to tRPC codes with the same detail as REST', async () => {
    const api = client(t.key);
    const invalid = await api.memories.create.mutate({ collection: 'rpc', text: '' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(TRPCClientError);
    const e = invalid as TRPCClientError<AppRouter>;
    expect(e.data?.code).toBe('UNPROCESSABLE_CONTENT');
    expect(e.data?.httpStatus).toBe(422);
    const missing = (await api.memories.get.query({ collection: 'rpc', id: 'nope' }).catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(missing.data?.code).toBe('NOT_FOUND');
    const unauth = (await client('mv_wrong')
      .collections.list.query({})
      .catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(unauth.data?.code).toBe('UNAUTHORIZED');
  });

  it('names an invalid bulk item by the field the caller sent (REST, whose body is the array itself, says 1.text)', async () => {
    const e = (await client(t.key)
      .memories.bulk.mutate({ collection: 'rpc', items: [{ text: 'a' }, { text: '' }] })
      .catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(e.data?.code).toBe('UNPROCESSABLE_CONTENT');
    expect(e.data?.errors?.map((f) => f.path)).toEqual(['items.1.text']);
    expect(e.data?.detail).toMatch(/^Invalid request: items\.1\.text: /);
  });

  it('has every procedure at its name (the key of its REST options too, rest-adapter/options.ts)', () => {
    for (const [group, procs] of Object.entries(catalogue)) for (const [verb, proc] of Object.entries(procs)) expect(proc.name).toBe(`${group}.${verb}`);
  });

  it('read-only keys may query but not mutate', async () => {
    const reader = client((await t.newKey('reader', true)).key);
    expect(Array.isArray(await reader.collections.list.query({}))).toBe(true);
    const denied = (await reader.memories.create.mutate({ collection: 'rpc', text: 'x' }).catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(denied.data?.code).toBe('FORBIDDEN');
  });
});

import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../trpc/router.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';

const { url, adminKey } = shared();
let t: Tenant;

const client = (key: string) =>
  createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${key}` } })] });

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

  it('maps errors to tRPC codes with the same detail as REST', async () => {
    const api = client(t.key);
    const invalid = await api.memories.create.mutate({ collection: 'rpc', text: '' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(TRPCClientError);
    const e = invalid as TRPCClientError<AppRouter>;
    expect(e.data?.code).toBe('UNPROCESSABLE_CONTENT');
    expect(e.data?.httpStatus).toBe(422);
    const missing = (await api.memories.get.query({ collection: 'rpc', id: 'nope' }).catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(missing.data?.code).toBe('NOT_FOUND');
    const unauth = (await client('mv_wrong').collections.list.query({}).catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(unauth.data?.code).toBe('UNAUTHORIZED');
  });

  it('read-only keys may query but not mutate', async () => {
    const reader = client((await t.newKey('reader', true)).key);
    expect(Array.isArray(await reader.collections.list.query({}))).toBe(true);
    const denied = (await reader.memories.create.mutate({ collection: 'rpc', text: 'x' }).catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(denied.data?.code).toBe('FORBIDDEN');
  });
});

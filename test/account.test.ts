import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, type Tenant } from './support/client.ts';
import { importAndWait } from './support/imports.ts';
import { startServer, type TestServer } from './support/server.ts';
import { trpcClient } from './support/transports.ts';

describe('account: stats, export, import, delete', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  });
  afterAll(() => server?.close());
  const tenant = () => newTenant(server.url, server.adminKey);

  it('stats count collections, memories, stored bytes and recent additions', async () => {
    const t = await tenant();
    expect((await t.api('GET', '/v1/memory/admin/stats')).body).toEqual({
      collections: 0,
      memories: 0,
      storage_bytes: 0,
      added_7d: 0,
      added_30d: 0,
      jobs: { failed_extractions: 0, stuck_extractions: 0, failed_files: 0, stuck_files: 0, failed_proxy_stores: 0, failed_graph_fills: 0 },
    });
    await t.api('POST', '/v1/memory/collections/a/memories', { text: 'héllo', metadata: { k: 1 } });
    await t.api('POST', '/v1/memory/collections/a/memories', { text: 'second' });
    const old = await t.api('POST', '/v1/memory/collections/b/memories', { text: 'third' });
    await t.api('POST', '/v1/memory/collections', { name: 'empty' });
    await server.app.db.query(`update memories set created_at = now() - interval '10 days' where tenant_id = $1 and id = $2`, [t.id, old.body.id]);
    const stats = await t.api('GET', '/v1/memory/admin/stats');
    // Bytes: UTF-8 text plus the stored metadata text ('{"k": 1}' and '{}').
    expect(stats.body).toEqual({
      collections: 3,
      memories: 3,
      storage_bytes: 6 + 8 + 6 + 2 + 5 + 2,
      added_7d: 2,
      added_30d: 3,
      jobs: { failed_extractions: 0, stuck_extractions: 0, failed_files: 0, stuck_files: 0, failed_proxy_stores: 0, failed_graph_fills: 0 },
    });
  });

  it('exports a streamed attachment that imports back into another account', async () => {
    const a = await tenant();
    const items = Array.from({ length: 100 }, (_, i) => ({ text: `note ${i}`, importance: (i % 10) / 10, metadata: { i } }));
    for (let round = 0; round < 6; round++) {
      expect((await a.api('POST', `/v1/memory/collections/c${round % 2}/memories/bulk`, items)).status).toBe(201);
    }
    const pinned = await a.api('POST', '/v1/memory/collections/special/memories', { text: 'pinned and tagged', category: 'fact', container_tag: 'user-7' });
    await a.api('POST', `/v1/memory/collections/special/memories/${pinned.body.id}/pin`, { pinned: true });
    const archived = await a.api('POST', '/v1/memory/collections/special/memories', { text: 'archived one' });
    await a.api('POST', `/v1/memory/collections/special/memories/${archived.body.id}/archive`, { archived: true });
    await a.api('POST', '/v1/memory/collections', { name: 'described', description: 'kept on import', metadata: { team: 'x' } });

    const res = await fetch(`${server.url}/v1/memory/admin/export`, { headers: { authorization: `Bearer ${a.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="orgmem-export-\d{4}-\d{2}-\d{2}\.json"$/);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    // Streamed: sent in chunks, with no length known up front.
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('ratelimit-limit')).toBe('3000');
    const file = await res.json();
    expect(file).toMatchObject({ version: 1, tenant: { id: a.id, name: a.name } });
    expect(file.memories).toHaveLength(602);
    expect(new Set(file.memories.map((m: { id: string }) => m.id)).size).toBe(602);
    expect(file.collections.map((c: { name: string }) => c.name)).toEqual(['c0', 'c1', 'described', 'special']);
    expect(Object.keys(file.memories[0]).sort()).not.toContain('embedding');

    const b = await tenant();
    const imported = await importAndWait(server.url, b.key, { body: file });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ imported: 602, skipped: 0, collections: ['c0', 'c1', 'described', 'special'], errors: [] });

    const again = await (await fetch(`${server.url}/v1/memory/admin/export`, { headers: { authorization: `Bearer ${b.key}` } })).json();
    const comparable = (m: Record<string, unknown>) => {
      // The trust class is where a memory came from, and so is this copy's: an import (docs/trust.md).
      const { id: _id, created_at: _c, updated_at: _u, created_by: _b, trust: _t, ...rest } = m;
      return rest;
    };
    expect(new Set(again.memories.map((m: { trust: string }) => m.trust))).toEqual(new Set(['import']));
    const sort = (list: Array<Record<string, unknown>>) => list.map(comparable).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    expect(sort(again.memories)).toEqual(sort(file.memories));
    expect(again.collections.find((c: { name: string }) => c.name === 'described')).toMatchObject({ description: 'kept on import', metadata: { team: 'x' } });
    // New ids, and the imported texts are searchable by embedding (stored with one).
    const ids = new Set(file.memories.map((m: { id: string }) => m.id));
    expect(again.memories.filter((m: { id: string }) => ids.has(m.id))).toEqual([]);
    const { n } = (
      await server.app.db.query<{ n: number }>('select count(*)::int as n from memories where tenant_id = $1 and embedding is not null', [b.id])
    )[0]!;
    expect(n).toBe(602);
    const listed = await b.api('GET', '/v1/memory/collections');
    // The archived one is imported archived: counted apart.
    expect(listed.body.map((c: { name: string; memory_count: number; archived_count: number }) => [c.name, c.memory_count, c.archived_count])).toEqual([
      ['c0', 300, 0],
      ['c1', 300, 0],
      ['described', 0, 0],
      ['special', 1, 1],
    ]);
  });

  it('leaves out collections the exporting key may not read', async () => {
    const t = await tenant();
    const other = await t.newKey('other');
    await t.api('POST', '/v1/memory/collections/open/memories', { text: 'visible' });
    await t.api('POST', '/v1/memory/collections/secret/memories', { text: 'hidden' });
    await t.api('PUT', '/v1/memory/collections/secret/grants', { agent_key_id: other.id, can_read: true, can_write: true });
    const file = await (await fetch(`${server.url}/v1/memory/admin/export`, { headers: { authorization: `Bearer ${t.key}` } })).json();
    expect(file.collections.map((c: { name: string }) => c.name)).toEqual(['open']);
    expect(file.memories.map((m: { text: string }) => m.text)).toEqual(['visible']);
  });

  it('skips and counts bad import items and collections the key may not write, importing the rest', async () => {
    const t = await tenant();
    const writer = await t.newKey('writer');
    await t.api('POST', '/v1/memory/collections/locked/memories', { text: 'x' });
    await t.api('PUT', '/v1/memory/collections/locked/grants', { agent_key_id: writer.id, can_read: true, can_write: true });
    const res = await importAndWait(server.url, t.key, {
      body: {
        memories: [
          { text: 'good one', collection: 'kept' },
          { text: '' },
          'not an object',
          { text: 'bad importance', importance: 2 },
          { text: 'bad collection', collection: '.hidden' },
          { text: 'into the locked one', collection: 'locked' },
          { text: 'no collection given' },
          { text: 'x'.repeat(10_001) },
          null,
          { text: 'good two', collection: 'kept', pinned: true, metadata: { from: 'import' } },
        ],
        collections: [{ name: 'made-empty', description: 'listed only' }, { name: '' }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(3);
    expect(res.body.skipped).toBe(7);
    expect(res.body.errors.map((e: { index: number }) => e.index)).toEqual([1, 2, 3, 4, 5, 7, 8]);
    expect(res.body.errors.find((e: { index: number }) => e.index === 5).detail).toMatch(/may not write collection "locked"/);
    expect(res.body.collections).toEqual(['default', 'kept', 'made-empty']);
    const kept = await t.api('GET', '/v1/memory/collections/kept/memories');
    expect(kept.body.map((m: { text: string; pinned: boolean }) => [m.text, m.pinned])).toEqual([
      ['good two', true],
      ['good one', false],
    ]);

    const into = await importAndWait(server.url, t.key, {
      body: {
        memories: [
          { text: 'a', collection: 'x' },
          { text: 'b', collection: 'y' },
        ],
        into_collection: 'together',
      },
    });
    expect(into.body).toMatchObject({ imported: 2, skipped: 0, collections: ['together'] });

    expect((await t.api('POST', '/v1/memory/admin/import', { memories: 'nope' })).status).toBe(422);
    expect((await t.api('POST', '/v1/memory/admin/import', {})).status).toBe(422);
    expect((await t.api('POST', '/v1/memory/admin/import', { memories: [], into_collection: '.x' })).status).toBe(422);
    const reader = await t.newKey('reader', true);
    expect((await t.api('POST', '/v1/memory/admin/import', { memories: [{ text: 'a' }] }, reader.key)).status).toBe(403);
  });

  it('an import into a restricted collection the key may not write skips its items and leaves the collection as it was', async () => {
    const t = await tenant();
    // An admin key, as import needs one: grants bind it all the same.
    const agent = await t.newKey('agent', false, 'admin');
    await t.api('POST', '/v1/memory/collections', { name: 'locked', description: 'as the owner left it' });
    const owner = (await t.api('GET', '/v1/memory/agents')).body.find((a: { id: string }) => a.id !== agent.id).id;
    // The agent may read "locked" but not write it.
    for (const [id, write] of [
      [owner, true],
      [agent.id, false],
    ] as const) {
      expect((await t.api('PUT', '/v1/memory/collections/locked/grants', { agent_key_id: id, can_read: true, can_write: write })).status).toBe(200);
    }
    const into = await importAndWait(server.url, agent.key, {
      body: { memories: [{ text: 'one' }, { text: 'two', collection: 'open' }], into_collection: 'locked' },
    });
    expect(into.status).toBe(200);
    expect(into.body).toMatchObject({
      complete: true,
      imported: 0,
      skipped: 2,
      collections: [],
      errors: [0, 1].map((index) => ({ index, detail: 'this API key may not write collection "locked"' })),
    });
    // A listed collection the key may not write is not created or changed either; the rest is imported.
    const listed = await importAndWait(server.url, agent.key, {
      body: { memories: [{ text: 'three', collection: 'open' }], collections: [{ name: 'locked', description: 'changed by the import' }, { name: 'made' }] },
    });
    expect(listed.body).toMatchObject({ complete: true, imported: 1, skipped: 0, pending: 0, collections: ['made', 'open'], errors: [] });
    const locked = await t.api('GET', '/v1/memory/collections/locked');
    expect(locked.body).toMatchObject({ description: 'as the owner left it', memory_count: 0 });
  });

  it('takes import bodies beyond the usual 8 MB limit (up to 64 MB)', async () => {
    const t = await tenant();
    // Mostly oversized (skipped) items: the size is what is tested, storing 9 MB is not needed.
    const memories = Array.from({ length: 1000 }, (_, i) => ({ text: i < 10 ? `kept ${i}` : 'x'.repeat(10_001), collection: 'big' }));
    const body = JSON.stringify({ memories });
    expect(body.length).toBeGreaterThan(9_000_000);
    const res = await importAndWait(server.url, t.key, { rawBody: body });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ imported: 10, skipped: 990, collections: ['big'] });
    const elsewhere = await call(server.url, 'POST', '/v1/memory/collections/big/memories/bulk', { key: t.key, rawBody: body });
    expect(elsewhere.status).toBe(413);
    expect(elsewhere.body.detail).toMatch(/8388608 bytes/);
  });

  it('export is a REST download: over tRPC it is a 400 pointing there', async () => {
    const t = await tenant();
    const client = trpcClient(server.url, t.key);
    await expect(client.admin.export.query({})).rejects.toMatchObject({
      data: { httpStatus: 400 },
      message: expect.stringMatching(/GET \/v1\/memory\/admin\/export/),
    });
  });

  it('deletes the account only with its exact name, and then every key is 401', async () => {
    const t: Tenant = await tenant();
    const second = await t.newKey('second');
    const reader = await t.newKey('reader', true);
    await t.api('POST', '/v1/memory/collections/a/memories', { text: 'to be erased' });
    await t.api('PUT', '/v1/memory/collections/a/grants', { agent_key_id: second.id, can_read: true, can_write: true });
    await t.api('PUT', '/v1/memory/webhook/config', { url: 'http://127.0.0.1:9/h' });

    expect((await t.api('POST', '/v1/memory/admin/delete-account', { confirm: t.name }, reader.key)).status).toBe(403);
    const wrong = await t.api('POST', '/v1/memory/admin/delete-account', { confirm: `${t.name}x` });
    expect(wrong.status).toBe(400);
    expect((await t.api('POST', '/v1/memory/admin/delete-account', {})).status).toBe(422);
    expect((await t.api('GET', '/v1/memory/admin/me')).status).toBe(200);

    const done = await t.api('POST', '/v1/memory/admin/delete-account', { confirm: t.name });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ deleted: true });
    for (const key of [t.key, second.key, reader.key]) {
      const res = await call(server.url, 'GET', '/v1/memory/collections', { key });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
    for (const table of ['tenants', 'api_keys', 'collections', 'memories', 'collection_grants', 'webhooks', 'audit_log', 'reveal_tokens']) {
      const column = table === 'tenants' ? 'id' : 'tenant_id';
      const { n } = (await server.app.db.query<{ n: number }>(`select count(*)::int as n from ${table} where ${column} = $1`, [t.id]))[0]!;
      expect(n, table).toBe(0);
    }
  });
});

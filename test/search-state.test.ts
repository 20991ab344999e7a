import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * What search must never show (superseded, expired, restricted, other tenants'), the cache's
 * invalidation, and grants. Its own server: these tests set supersession and expiry directly in
 * the database (the features that set them land separately). The hash embedder is enough here:
 * identical texts are similarity 1, texts without shared words are far apart.
 */
let server: TestServer;
let t: Tenant;
const C = '/v1/memory/collections';

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  t = await newTenant(server.url, server.adminKey);
});
afterAll(() => server?.close());

const ids = (res: { body: { results: Array<{ id: string }> } }) => res.body.results.map((r) => r.id);
const sql = (text: string, params: unknown[]) => server.app.db.query(text, params);

async function store(tenant: Tenant, collection: string, texts: string[]): Promise<string[]> {
  const res = await tenant.api(
    'POST',
    `${C}/${collection}/memories/bulk`,
    texts.map((text) => ({ text })),
  );
  expect(res.status).toBe(201);
  return res.body.ids;
}

describe('visibility', () => {
  it('superseded and expired memories never appear; a future expiry still does', async () => {
    const [superseded, newer, expiredByTime, expiredBySweep, future] = await store(t, 'facts', [
      'Dana lives in Lisbon near the river',
      'Dana lives in Porto near the river',
      'Dana lives in Osaka near the river',
      'Dana lives in Lima near the river',
      'Dana lives in Oslo near the river',
    ]);
    await sql(`update memories set superseded_by = $2, superseded_at = now() where tenant_id = $1 and id = $3`, [t.id, newer, superseded]);
    await sql(`update memories set valid_to = now() - interval '1 minute' where tenant_id = $1 and id = $2`, [t.id, expiredByTime]);
    await sql(`update memories set valid_to = now() - interval '2 hours', expired_at = now() where tenant_id = $1 and id = $2`, [t.id, expiredBySweep]);
    await sql(`update memories set valid_to = now() + interval '1 day' where tenant_id = $1 and id = $2`, [t.id, future]);
    for (const mode of ['hybrid', 'vector', 'text']) {
      for (const path of [`${C}/facts/search`, '/v1/memory/search']) {
        const res = await t.api('POST', path, { query: 'Dana lives near the river', mode, limit: 10, min_score: 0, include_archived: true });
        expect(res.status).toBe(200);
        expect(ids(res).sort()).toEqual([newer, future].sort());
      }
    }
    const related = await t.api('GET', `${C}/facts/memories/${newer}/related?limit=10`);
    expect(ids(related)).toEqual([future]);
  });

  it('a memory leaves cached answers when its expiry passes', async () => {
    const [soon] = await store(t, 'ephemeral', ['Parking spot 12 is reserved for visitors']);
    await sql(`update memories set valid_to = now() + interval '1500 milliseconds' where tenant_id = $1 and id = $2`, [t.id, soon]);
    const body = { query: 'parking spot reserved', min_score: 0 };
    expect(ids(await t.api('POST', `${C}/ephemeral/search`, body))).toEqual([soon]);
    expect((await t.api('POST', `${C}/ephemeral/search`, body)).body.cached).toBe(true);
    await new Promise((r) => setTimeout(r, 2000));
    const after = await t.api('POST', `${C}/ephemeral/search`, body);
    expect(after.body.cached).toBe(false);
    expect(after.body.results).toEqual([]);
  });
});

describe('cache', () => {
  it('serves an exact repeat until a write in that collection, not a write elsewhere', async () => {
    const own = await newTenant(server.url, server.adminKey);
    await store(own, 'alpha', ['The release train leaves every second Tuesday']);
    await store(own, 'beta', ['Snacks are restocked on Mondays']);
    const body = { query: 'when does the release train leave', min_score: 0 };
    const first = await own.api('POST', `${C}/alpha/search`, body);
    expect(first.body.cached).toBe(false);
    const second = await own.api('POST', `${C}/alpha/search`, body);
    expect(second.body.cached).toBe(true);
    expect(second.body.results).toEqual(first.body.results);
    expect(second.body.query_embedding_ms).toBe(0);
    // Other parameters are another query.
    expect((await own.api('POST', `${C}/alpha/search`, { ...body, limit: 6 })).body.cached).toBe(false);
    const all = { query: 'release train', mode: 'text' };
    expect((await own.api('POST', '/v1/memory/search', all)).body.cached).toBe(false);
    expect((await own.api('POST', '/v1/memory/search', all)).body.cached).toBe(true);

    await store(own, 'beta', ['The coffee machine is descaled on Fridays']);
    expect((await own.api('POST', `${C}/alpha/search`, body)).body.cached).toBe(true);
    // All-collection answers depend on every collection.
    expect((await own.api('POST', '/v1/memory/search', all)).body.cached).toBe(false);

    const [added] = await store(own, 'alpha', ['The release train was moved to Wednesdays']);
    const afterWrite = await own.api('POST', `${C}/alpha/search`, body);
    expect(afterWrite.body.cached).toBe(false);
    expect(ids(afterWrite)).toContain(added);
    expect((await own.api('POST', `${C}/alpha/search`, body)).body.cached).toBe(true);

    // Deletes and updates are writes too.
    await own.api('DELETE', `${C}/alpha/memories/${added}`);
    const afterDelete = await own.api('POST', `${C}/alpha/search`, body);
    expect(afterDelete.body.cached).toBe(false);
    expect(ids(afterDelete)).not.toContain(added);
  });
});

describe('grants', () => {
  it('restricted collections the key may not read are left out of all-collection search and refused by name', async () => {
    const own = await newTenant(server.url, server.adminKey);
    const other = await own.newKey('other agent');
    await store(own, 'open', ['Quarterly planning notes for the open roadmap']);
    const [secret] = await store(own, 'secret', ['Quarterly planning notes for the secret acquisition']);
    const body = { query: 'quarterly planning notes', mode: 'text', limit: 10 };
    expect((await own.api('POST', '/v1/memory/search', body)).body.results).toHaveLength(2);
    // The first grant restricts the collection to the granted key.
    await sql(`insert into collection_grants (tenant_id, collection, agent_key_id, can_read, can_write) values ($1, 'secret', $2, true, false)`, [
      own.id,
      other.id,
    ]);
    const res = await own.api('POST', '/v1/memory/search', body);
    expect(res.body.cached).toBe(false);
    expect(res.body.results.map((r: { collection: string }) => r.collection)).toEqual(['open']);
    expect((await own.api('POST', `${C}/secret/search`, body)).status).toBe(403);
    expect((await own.api('POST', '/v1/memory/search', { ...body, collection: 'secret' })).status).toBe(403);
    expect((await own.api('GET', `${C}/secret/memories/${secret}/related`)).status).toBe(403);
    const granted = await own.api('POST', '/v1/memory/search', body, other.key);
    expect(granted.body.results.map((r: { collection: string }) => r.collection).sort()).toEqual(['open', 'secret']);
  });
});

describe('related', () => {
  it('answers the nearest memories, never the memory itself or archived ones', async () => {
    const own = await newTenant(server.url, server.adminKey);
    const [target, near, archived, far] = await store(own, 'r', [
      'Kemi likes spicy ramen and dim sum for team dinners',
      'Kemi likes spicy ramen for team dinners',
      'Kemi likes dim sum for team dinners',
      'The wifi password rotates monthly',
    ]);
    await own.api('POST', `${C}/r/memories/${archived}/archive`, { archived: true });
    const res = await own.api('GET', `${C}/r/memories/${target}/related?limit=10`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['cached', 'query_embedding_ms', 'results', 'search_ms']);
    expect(ids(res)[0]).toBe(near);
    expect(ids(res)).not.toContain(target);
    expect(ids(res)).not.toContain(archived);
    expect(ids(res)).toContain(far);
    const strict = await own.api('GET', `${C}/r/memories/${target}/related?min_score=0.5`);
    expect(ids(strict)).toEqual([near]);
    expect((await own.api('GET', `${C}/r/memories/${target}/related?limit=1`)).body.results).toHaveLength(1);
    expect((await own.api('GET', `${C}/r/memories/${target}/related?limit=0`)).status).toBe(422);
    expect((await own.api('GET', `${C}/r/memories/${target}/related?limit=51`)).status).toBe(422);
    expect((await own.api('GET', `${C}/r/memories/not-a-uuid/related`)).status).toBe(404);
    expect((await own.api('GET', `${C}/r/memories/01a1fd79-7776-72c2-831f-8acb2c5f29d5/related`)).status).toBe(404);
  });
});

describe('forget', () => {
  it('deletes only the matches at or above min_score and says which', async () => {
    const own = await newTenant(server.url, server.adminKey);
    const [exact, , unrelated] = await store(own, 'f', [
      'My phone number is 555 0101',
      'My phone number changed last spring',
      'The garden needs watering on Sundays',
    ]);
    const res = await own.api('POST', `${C}/f/forget`, { query: 'My phone number is 555 0101', min_score: 0.95 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: 1, ids: [exact] });
    const left = await own.api('GET', `${C}/f/memories`);
    expect(left.body).toHaveLength(2);
    expect(left.body.map((m: { id: string }) => m.id)).toContain(unrelated);
    expect((await own.api('GET', `${C}/f`)).body.memory_count).toBe(2);
    // Default threshold 0.5: the other phone memory shares enough words, the garden one does not.
    const second = await own.api('POST', `${C}/f/forget`, { query: 'phone number' });
    expect(second.body.deleted).toBe(1);
    expect((await own.api('GET', `${C}/f/memories`)).body.map((m: { id: string }) => m.id)).toEqual([unrelated]);
    const none = await own.api('POST', `${C}/f/forget`, { query: 'phone number' });
    expect(none.body).toEqual({ deleted: 0, ids: [] });
  });

  it('respects limit, refuses read-only keys and bad input', async () => {
    const own = await newTenant(server.url, server.adminKey);
    await store(own, 'g', ['Temporary note one', 'Temporary note one', 'Temporary note one']);
    const limited = await own.api('POST', `${C}/g/forget`, { query: 'Temporary note one', min_score: 0.9, limit: 2 });
    expect(limited.body.deleted).toBe(2);
    const ro = await own.newKey('reader', true);
    expect((await own.api('POST', `${C}/g/forget`, { query: 'Temporary note one' }, ro.key)).status).toBe(403);
    expect((await own.api('POST', `${C}/g/forget`, {})).status).toBe(422);
    expect((await own.api('POST', `${C}/g/forget`, { query: 'x', min_score: 2 })).status).toBe(422);
    expect((await own.api('POST', `${C}/g/forget`, { query: 'x', limit: 0 })).status).toBe(422);
    expect((await own.api('POST', `${C}/missing/forget`, { query: 'x' })).status).toBe(404);
    expect((await own.api('GET', `${C}/g/memories`)).body).toHaveLength(1);
  });
});

describe('tenant isolation', () => {
  it("tenant B never sees or deletes tenant A's memories through search, related or forget", async () => {
    const a = await newTenant(server.url, server.adminKey);
    const b = await newTenant(server.url, server.adminKey);
    const [secret] = await store(a, 'shared-name', ['The launch code word is marmalade']);
    const query = { query: 'The launch code word is marmalade', min_score: 0 };
    for (const mode of ['hybrid', 'vector', 'text']) {
      expect((await b.api('POST', `${C}/shared-name/search`, { ...query, mode })).status).toBe(404);
      expect((await b.api('POST', '/v1/memory/search', { ...query, mode })).body.results).toEqual([]);
    }
    expect((await b.api('GET', `${C}/shared-name/memories/${secret}/related`)).status).toBe(404);
    expect((await b.api('POST', `${C}/shared-name/forget`, { query: query.query, min_score: 0 })).status).toBe(404);
    // B's own collection of the same name holds only B's memories.
    const [mine] = await store(b, 'shared-name', ['Marmalade is on the breakfast list']);
    const res = await b.api('POST', `${C}/shared-name/search`, { ...query, limit: 10 });
    expect(ids(res)).toEqual([mine]);
    expect(ids(await b.api('POST', '/v1/memory/search', { ...query, limit: 10 }))).toEqual([mine]);
    expect((await b.api('GET', `${C}/shared-name/memories/${secret}/related`)).status).toBe(404);
    const forgot = await b.api('POST', `${C}/shared-name/forget`, { query: query.query, min_score: 0 });
    expect(forgot.body.ids).toEqual([mine]);
    expect(ids(await a.api('POST', `${C}/shared-name/search`, query))).toEqual([secret]);
  });
});

describe('front ends', () => {
  it('MCP search_memory searches one collection or all of them', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const own = await newTenant(server.url, server.adminKey);
    const [inA] = await store(own, 'mcp-a', ['Grace plays the cello in a quartet']);
    const [inB] = await store(own, 'mcp-b', ['The cello needs new strings']);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${own.key}` } } }),
    );
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((x) => x.name)).toContain('search_memory');
      const all = await client.callTool({ name: 'search_memory', arguments: { query: 'cello', mode: 'text' } });
      const allIds = (all.structuredContent as { results: Array<{ id: string; collection: string }> }).results.map((r) => r.id);
      expect(allIds.sort()).toEqual([inA, inB].sort());
      const one = await client.callTool({ name: 'search_memory', arguments: { query: 'cello', collection: 'mcp-b', mode: 'text' } });
      expect((one.structuredContent as { results: Array<{ id: string }> }).results.map((r) => r.id)).toEqual([inB]);
      const bad = await client.callTool({ name: 'search_memory', arguments: { query: 'cello', limit: 0 } });
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('tRPC exposes search, related and forget', async () => {
    const own = await newTenant(server.url, server.adminKey);
    const [id] = await store(own, 'rpc', ['Sailing lessons start in May']);
    const input = encodeURIComponent(JSON.stringify({ collection: 'rpc', query: 'sailing lessons', min_score: 0 }));
    const q = await call(server.url, 'GET', `/trpc/search.collection?input=${input}`, { key: own.key });
    expect(q.status).toBe(200);
    expect(q.body.result.data.results[0].id).toBe(id);
    const rel = await call(server.url, 'GET', `/trpc/memories.related?input=${encodeURIComponent(JSON.stringify({ collection: 'rpc', id }))}`, {
      key: own.key,
    });
    expect(rel.body.result.data.results).toEqual([]);
    const f = await call(server.url, 'POST', '/trpc/memories.forget', { key: own.key, body: { collection: 'rpc', query: 'Sailing lessons start in May' } });
    expect(f.body.result.data).toEqual({ deleted: 1, ids: [id] });
  });
});

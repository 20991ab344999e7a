import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, shared, type Tenant } from './support/client.ts';

const { url, adminKey } = shared();
const C = '/v1/memory/collections';
let t: Tenant;

beforeAll(async () => {
  t = await newTenant(url, adminKey);
});

describe('create and read', () => {
  it('applies the documented defaults and records the writing agent', async () => {
    const agent = await t.newKey('planner-agent');
    const res = await t.api('POST', `${C}/defaults/memories`, { text: 'The office is in Lisbon' }, agent.key);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      collection: 'defaults',
      text: 'The office is in Lisbon',
      importance: 0.5,
      category: 'other',
      source: 'api',
      metadata: {},
      container_tag: null,
      images: [],
      pinned: false,
      archived: false,
      created_by: { id: agent.id, label: 'planner-agent' },
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    const got = await t.api('GET', `${C}/defaults/memories/${res.body.id}`);
    expect(got.status).toBe(200);
    // GET adds how the memory was used (docs/search.md, "Recall counts"): never, yet.
    expect(got.body).toEqual({ ...res.body, use: { recalls: 0, last_recalled_at: null, confirmations: 0, last_confirmed_at: null } });
  });

  it('auto-creates the collection on first write and counts memories', async () => {
    await t.api('POST', `${C}/auto/memories`, { text: 'one', category: 'fact', importance: 0.9, metadata: { k: 1 }, container_tag: 'user-7' });
    await t.api('POST', `${C}/auto/memories`, { text: 'two' });
    const col = await t.api('GET', `${C}/auto`);
    expect(col.status).toBe(200);
    expect(col.body.memory_count).toBe(2);
    const list = await t.api('GET', C);
    expect(list.body.find((c: { name: string }) => c.name === 'auto').memory_count).toBe(2);
  });

  it('lists pinned first, then newest first, with limit, offset and include_archived', async () => {
    const ids: string[] = [];
    for (const text of ['first', 'second', 'third', 'fourth']) {
      ids.push((await t.api('POST', `${C}/order/memories`, { text })).body.id);
    }
    await t.api('POST', `${C}/order/memories/${ids[0]}/pin`, { pinned: true });
    await t.api('POST', `${C}/order/memories/${ids[2]}/archive`, { archived: true });
    const list = await t.api('GET', `${C}/order/memories`);
    expect(list.body.map((m: { text: string }) => m.text)).toEqual(['first', 'fourth', 'second']);
    const page = await t.api('GET', `${C}/order/memories?limit=1&offset=1`);
    expect(page.body.map((m: { text: string }) => m.text)).toEqual(['fourth']);
    const all = await t.api('GET', `${C}/order/memories?include_archived=true`);
    expect(all.body.map((m: { text: string }) => m.text)).toEqual(['first', 'fourth', 'third', 'second']);
  });

  it('filters by category, container_tag, pinned and archived', async () => {
    const add = (text: string, extra: Record<string, unknown> = {}) =>
      t.api('POST', `${C}/filters/memories`, { text, ...extra }).then((r) => r.body.id as string);
    const pref = await add('likes tea', { category: 'preference', container_tag: 'ana' });
    const fact = await add('lives in Porto', { category: 'fact', container_tag: 'ana' });
    const other = await add('likes coffee', { category: 'preference', container_tag: 'rui' });
    await t.api('POST', `${C}/filters/memories/${fact}/pin`, { pinned: true });
    await t.api('POST', `${C}/filters/memories/${other}/archive`, { archived: true });
    const ids = async (q: string) => (await t.api('GET', `${C}/filters/memories?${q}`)).body.map((m: { id: string }) => m.id);
    expect(await ids('category=preference')).toEqual([pref]);
    expect(await ids('category=preference&include_archived=true')).toEqual([other, pref]);
    expect(await ids('container_tag=ana')).toEqual([fact, pref]);
    expect(await ids('pinned=true')).toEqual([fact]);
    expect(await ids('pinned=false')).toEqual([pref]);
    expect(await ids('archived=true')).toEqual([other]);
    expect(await ids('archived=true&container_tag=ana')).toEqual([]);
    expect((await t.api('GET', `${C}/filters/memories?category=Not%20A%20Slug`)).status).toBe(422);
    expect((await t.api('GET', `${C}/filters/memories?pinned=maybe`)).status).toBe(422);
  });
});

describe('change', () => {
  it('patch changes only the supplied fields', async () => {
    const m = (await t.api('POST', `${C}/patch/memories`, { text: 'before', importance: 0.2, category: 'fact', metadata: { a: 1 } })).body;
    const res = await t.api('PATCH', `${C}/patch/memories/${m.id}`, { importance: 0.8 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ text: 'before', importance: 0.8, category: 'fact', metadata: { a: 1 } });
    const res2 = await t.api('PATCH', `${C}/patch/memories/${m.id}`, { text: 'after', metadata: { b: 2 } });
    expect(res2.body).toMatchObject({ text: 'after', importance: 0.8, metadata: { b: 2 } });
    expect(Date.parse(res2.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(m.updated_at));
  });

  it('pin and archive flip their flags and back', async () => {
    const m = (await t.api('POST', `${C}/flags/memories`, { text: 'flag me' })).body;
    expect((await t.api('POST', `${C}/flags/memories/${m.id}/pin`, { pinned: true })).body.pinned).toBe(true);
    expect((await t.api('POST', `${C}/flags/memories/${m.id}/pin`, { pinned: false })).body.pinned).toBe(false);
    expect((await t.api('POST', `${C}/flags/memories/${m.id}/archive`, { archived: true })).body.archived).toBe(true);
    expect((await t.api('GET', `${C}/flags/memories`)).body).toHaveLength(0);
    expect((await t.api('POST', `${C}/flags/memories/${m.id}/archive`, { archived: false })).body.archived).toBe(false);
    expect((await t.api('GET', `${C}/flags/memories`)).body).toHaveLength(1);
  });

  it('move auto-creates the target and keeps both counts right', async () => {
    const m = (await t.api('POST', `${C}/from/memories`, { text: 'moving' })).body;
    const res = await t.api('POST', `${C}/from/memories/${m.id}/move`, { to_collection: 'to-new' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: m.id, collection: 'to-new', text: 'moving' });
    expect((await t.api('GET', `${C}/from/memories/${m.id}`)).status).toBe(404);
    expect((await t.api('GET', `${C}/to-new/memories/${m.id}`)).status).toBe(200);
    expect((await t.api('GET', `${C}/from`)).body.memory_count).toBe(0);
    expect((await t.api('GET', `${C}/to-new`)).body.memory_count).toBe(1);
    const same = await t.api('POST', `${C}/to-new/memories/${m.id}/move`, { to_collection: 'to-new' });
    expect(same.status).toBe(400);
  });

  it('delete removes the memory', async () => {
    const m = (await t.api('POST', `${C}/del/memories`, { text: 'gone soon' })).body;
    expect((await t.api('DELETE', `${C}/del/memories/${m.id}`)).status).toBe(204);
    expect((await t.api('GET', `${C}/del/memories/${m.id}`)).status).toBe(404);
    expect((await t.api('DELETE', `${C}/del/memories/${m.id}`)).status).toBe(404);
    expect((await t.api('GET', `${C}/del`)).body.memory_count).toBe(0);
  });
});

describe('bulk', () => {
  it('stores up to 100 items and answers ids in input order', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ text: `bulk item ${i}`, importance: i / 100 }));
    const res = await t.api('POST', `${C}/bulk/memories/bulk`, items);
    expect(res.status).toBe(201);
    expect(res.body.created).toBe(100);
    expect(res.body.ids).toHaveLength(100);
    const third = await t.api('GET', `${C}/bulk/memories/${res.body.ids[3]}`);
    expect(third.body.text).toBe('bulk item 3');
  });

  it('stores each item with its own fields, whatever characters they hold', async () => {
    // The rows go to the database as one array a column: text an array literal would read
    // otherwise (commas, quotes, braces, backslashes, the word NULL) must come back as sent.
    const tricky = ['a, b', 'say "hi"', '{braces}', 'back\\slash', 'NULL', ' padded ', 'ünïcödé 😀', "it's"];
    const items = tricky.map((text, i) => ({
      text,
      importance: i / 10,
      category: i % 2 ? 'fact' : 'preference',
      source: `src-${i}`,
      metadata: i % 3 ? { n: i, s: text, list: [i, { deep: 'NULL' }] } : {},
      container_tag: i % 2 ? `user-${i}` : null,
      ...(i % 2 ? { observed_at: `2024-0${i}-01T10:00:00+02:00`, valid_to: '2031-01-01T00:00:00.000Z' } : { valid_from: '2025-05-05T00:00:00.000Z' }),
    }));
    const res = await t.api('POST', `${C}/bulkfields/memories/bulk`, items);
    expect(res.status).toBe(201);
    for (const [i, item] of items.entries()) {
      const got = (await t.api('GET', `${C}/bulkfields/memories/${res.body.ids[i]}`)).body;
      const { observed_at, valid_to, valid_from, ...fields } = item as typeof item & { observed_at?: string; valid_to?: string; valid_from?: string };
      expect(got).toMatchObject({ ...fields, images: [], pinned: false, archived: false, valid_to: valid_to ?? null });
      if (observed_at) expect(got.observed_at).toBe(new Date(observed_at).toISOString());
      expect(got.valid_from).toBe((valid_from ?? observed_at) ? new Date((valid_from ?? observed_at)!).toISOString() : got.created_at);
    }
    expect((await t.api('GET', `${C}/bulkfields`)).body.memory_count).toBe(items.length);
  });

  it('refuses 101 items', async () => {
    const items = Array.from({ length: 101 }, (_, i) => ({ text: `x${i}` }));
    const res = await t.api('POST', `${C}/bulk101/memories/bulk`, items);
    expect(res.status).toBe(422);
    expect((await t.api('GET', `${C}/bulk101`)).status).toBe(404);
  });

  it('one bad item fails the whole call, naming its index, and stores nothing', async () => {
    const items = [{ text: 'ok 0' }, { text: 'ok 1' }, { text: 'ok 2' }, { text: '' }];
    const res = await t.api('POST', `${C}/bulkbad/memories/bulk`, items);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].path).toBe('3.text');
    expect(res.body.detail).toContain('3.text');
    expect((await t.api('GET', `${C}/bulkbad`)).status).toBe(404);
  });

  it('a body that is not an array is 422', async () => {
    expect((await t.api('POST', `${C}/bulkobj/memories/bulk`, { text: 'x' })).status).toBe(422);
  });
});

describe('bad input', () => {
  const cases: Array<[string, unknown]> = [
    ['importance above 1', { text: 'x', importance: 1.5 }],
    ['importance below 0', { text: 'x', importance: -0.1 }],
    ['empty text', { text: '' }],
    ['text of 10001 characters', { text: 'a'.repeat(10_001) }],
    ['missing text', { importance: 0.5 }],
    ['text of the wrong type', { text: 42 }],
    ['category that is not a slug', { text: 'x', category: 'Not A Slug' }],
    ['metadata that is not an object', { text: 'x', metadata: [1, 2] }],
    ['metadata over 16 KiB', { text: 'x', metadata: { big: 'y'.repeat(17_000) } }],
  ];
  it.each(cases)('%s is 422 with errors[] and stores nothing', async (_n, body) => {
    const res = await t.api('POST', `${C}/bad/memories`, body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(expect.any(String));
    expect(res.body.errors.length).toBeGreaterThan(0);
    expect((await t.api('GET', `${C}/bad`)).status).toBe(404);
  });

  it('accepts text of exactly 10000 characters', async () => {
    expect((await t.api('POST', `${C}/edge/memories`, { text: 'a'.repeat(10_000) })).status).toBe(201);
  });

  it('limit 201 and limit 0 are 422; a non-number limit is 422', async () => {
    await t.api('POST', `${C}/lim/memories`, { text: 'x' });
    expect((await t.api('GET', `${C}/lim/memories?limit=201`)).status).toBe(422);
    expect((await t.api('GET', `${C}/lim/memories?limit=0`)).status).toBe(422);
    expect((await t.api('GET', `${C}/lim/memories?limit=ten`)).status).toBe(422);
    expect((await t.api('GET', `${C}/lim/memories?limit=200`)).status).toBe(200);
    expect((await t.api('GET', `${C}/lim/memories?include_archived=maybe`)).status).toBe(422);
  });

  it('malformed JSON is 400 and a wrong content type is 400', async () => {
    const raw = await fetch(`${url}${C}/json/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: '{"text": "unterminated',
    });
    expect(raw.status).toBe(400);
    expect((await raw.json()).detail).toMatch(/Malformed JSON/);
    const form = await fetch(`${url}${C}/json/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'text=hello',
    });
    expect(form.status).toBe(400);
    expect((await t.api('GET', `${C}/json`)).status).toBe(404);
  });

  it('unknown collection is 404 for reads; a malformed collection name is 422', async () => {
    expect((await t.api('GET', `${C}/never-written/memories`)).status).toBe(404);
    expect((await t.api('GET', `${C}/never-written`)).status).toBe(404);
    expect((await t.api('POST', `${C}/.hidden/memories`, { text: 'x' })).status).toBe(422);
    expect((await t.api('POST', `${C}/${'n'.repeat(65)}/memories`, { text: 'x' })).status).toBe(422);
  });

  it('a malformed or unknown memory id is 404', async () => {
    await t.api('POST', `${C}/ids/memories`, { text: 'x' });
    expect((await t.api('GET', `${C}/ids/memories/not-a-uuid`)).status).toBe(404);
    expect((await t.api('GET', `${C}/ids/memories/01900000-0000-7000-8000-000000000000`)).status).toBe(404);
    expect((await t.api('PATCH', `${C}/ids/memories/not-a-uuid`, { text: 'y' })).status).toBe(404);
  });

  it('a memory is not reachable through another collection path', async () => {
    const m = (await t.api('POST', `${C}/one/memories`, { text: 'x' })).body;
    await t.api('POST', `${C}/two/memories`, { text: 'y' });
    expect((await t.api('GET', `${C}/two/memories/${m.id}`)).status).toBe(404);
  });

  it('unknown fields are ignored, not echoed', async () => {
    const res = await t.api('POST', `${C}/extra/memories`, { text: 'x', surprise: true });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('surprise');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { col, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

let fake: FakeLlm;
let server: TestServer;
const tenant = () => newTenant(server.url, server.adminKey);
const bareTenant = () => newTenant(shared().url, shared().adminKey);

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake, [
    ['Ana lives in Porto.', 'Ana lives in Lisbon.'],
    ['Ana lives in Faro.', 'Ana lives in Porto.'],
  ]);
  fake.on('summarize', (call) => ({ json: { summary: `LLM summary of ${call.user.split('\n').length} memories`, themes: ['llm-theme'] } }));
  fake.on('profile', (call) => ({ json: { profile: `LLM profile from ${JSON.parse(call.user).facts.length} facts` } }));
  server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const create = async (t: Tenant, c: string, text: string, extra: Record<string, unknown> = {}) => {
  const res = await t.api('POST', `${col(c)}/memories`, { text, ...extra });
  expect(res.status).toBe(201);
  return res.body;
};
const backdate = (t: Tenant, ids: string[], days: number) =>
  server.app.db.query(`update memories set updated_at = now() - make_interval(days => $3) where tenant_id = $1 and id = any($2::uuid[])`, [t.id, ids, days]);

describe('summary', () => {
  it('without an LLM: extractive, cached until a write, never an error', async () => {
    const t = await bareTenant();
    await create(t, 's', 'The quarterly budget review moved to Thursday.');
    await create(t, 's', 'Budget owners must send forecasts before the review.');
    await create(t, 's', 'The office plants need water on Mondays.');
    const first = await t.api('GET', `${col('s')}/summary`);
    expect(first.status).toBe(200);
    expect(first.body.based_on).toBe(3);
    expect(first.body.themes[0]).toBe('budget');
    expect(first.body.themes).toContain('review');
    expect(first.body.summary).toContain('Budget owners must send forecasts before the review.');
    expect(new Date(first.body.generated_at).toISOString()).toBe(first.body.generated_at);
    const again = await t.api('GET', `${col('s')}/summary`);
    expect(again.body).toEqual(first.body);
    await create(t, 's', 'Forecasts go to the finance channel.');
    const after = await t.api('GET', `${col('s')}/summary`);
    expect(after.body.based_on).toBe(4);

    await t.api('POST', '/v1/memory/collections', { name: 'empty' });
    expect((await t.api('GET', `${col('empty')}/summary`)).body).toMatchObject({ summary: '', themes: [], based_on: 0 });
    expect((await t.api('GET', `${col('nope')}/summary`)).status).toBe(404);
    expect((await t.api('GET', `${col('s')}/summary?limit=0`)).status).toBe(422);
    expect((await t.api('GET', `${col('s')}/summary?limit=201`)).status).toBe(422);
  });

  it('with an LLM: one call, bounded input, cached by collection version; a failing LLM falls back uncached', async () => {
    const t = await tenant();
    for (let i = 0; i < 55; i++) await create(t, 'big', `Note ${i}: ${i === 54 ? 'x'.repeat(5_000) : 'about the launch plan'}`);
    const before = fake.callsNamed('summarize').length;
    const res = await t.api('GET', `${col('big')}/summary`);
    expect(res.body).toMatchObject({ summary: 'LLM summary of 50 memories', themes: ['llm-theme'], based_on: 50 });
    const call = fake.callsNamed('summarize').at(-1)!;
    expect(call.user.startsWith('1. Note 54: xxx')).toBe(true);
    expect(call.user.split('\n')[0]!.length).toBeLessThan(1_020);
    expect((await t.api('GET', `${col('big')}/summary`)).body).toEqual(res.body);
    expect(fake.callsNamed('summarize').length - before).toBe(1);
    expect((await t.api('GET', `${col('big')}/summary?limit=5`)).body.based_on).toBe(5);

    await create(t, 'big', 'A new note invalidates the cache.');
    fake.script('summarize', { content: 'not json' }, { json: { summary: 1 } });
    const fallback = await t.api('GET', `${col('big')}/summary`);
    expect(fallback.status).toBe(200);
    expect(fallback.body.summary).not.toContain('LLM summary');
    expect(fallback.body.themes).toContain('note');
    const retried = await t.api('GET', `${col('big')}/summary`);
    expect(retried.body.summary).toBe('LLM summary of 50 memories');
  });
});

describe('profile', () => {
  it('is built from current, non-expired facts and preferences only', async () => {
    const t = await tenant();
    const past = new Date(Date.now() - 1_000).toISOString();
    await rememberSync(t, 'p', `Ana lives in Lisbon. Ana likes jazz. Yesterday Ana baked bread. Ana is in Rome (until ${past}).`);
    await rememberSync(t, 'p', 'Ana lives in Porto.');
    const before = fake.callsNamed('profile').length;
    const res = await t.api('GET', `${col('p')}/profile`);
    expect(res.body).toEqual({ profile: 'LLM profile from 2 facts', based_on: 2 });
    const sent = JSON.parse(fake.callsNamed('profile').at(-1)!.user).facts.map((f: any) => [f.type, f.text]);
    expect(sent.sort()).toEqual([
      ['fact', 'Ana lives in Porto.'],
      ['preference', 'Ana likes jazz.'],
    ]);
    await t.api('GET', `${col('p')}/profile`);
    expect(fake.callsNamed('profile').length - before).toBe(1);
  });

  it('without an LLM lists the preferences and facts', async () => {
    const t = await bareTenant();
    await rememberSync(t, 'p', 'I like green tea. My desk is on floor 3.');
    const res = await t.api('GET', `${col('p')}/profile`);
    expect(res.body).toEqual({ profile: "Preferences:\n- The user likes green tea.\n\nFacts:\n- The user's desk is on floor 3.", based_on: 2 });
    expect((await t.api('GET', `${col('unknown')}/profile`)).status).toBe(404);
  });
});

describe('contradictions', () => {
  it('lists pairs newest first, with a limit', async () => {
    const t = await tenant();
    await rememberSync(t, 'k', 'Ana lives in Lisbon.');
    await rememberSync(t, 'k', 'Ana lives in Porto.');
    await rememberSync(t, 'k', 'Ana lives in Faro.');
    const all = (await t.api('GET', `${col('k')}/contradictions`)).body;
    expect(all.map((p: any) => [p.current.text, p.superseded.text])).toEqual([
      ['Ana lives in Faro.', 'Ana lives in Porto.'],
      ['Ana lives in Porto.', 'Ana lives in Lisbon.'],
    ]);
    expect((await t.api('GET', `${col('k')}/contradictions?limit=1`)).body).toHaveLength(1);
    expect((await t.api('GET', `${col('k')}/contradictions?limit=0`)).status).toBe(422);
    expect((await t.api('GET', `${col('none')}/contradictions`)).status).toBe(404);
  });
});

describe('dedup', () => {
  it('keeper: pinned, else highest importance, then newest; dry run changes nothing', async () => {
    const t = await tenant();
    const text = 'The wifi password is hunter2.';
    const a = await create(t, 'd', text, { importance: 0.9 });
    const b = await create(t, 'd', text, { importance: 0.2 });
    await t.api('POST', `${col('d')}/memories/${b.id}/pin`, { pinned: true });
    const c = await create(t, 'd', text, { importance: 0.5 });
    const other = 'The printer is on the second floor.';
    const d = await create(t, 'd', other, { importance: 0.3 });
    const e = await create(t, 'd', other, { importance: 0.8 });
    const f = await create(t, 'd', other, { importance: 0.8 });
    await create(t, 'd', 'Lunch is served at noon.');

    const dry = await t.api('POST', `${col('d')}/dedup`, {});
    expect(dry.status).toBe(200);
    const clusters = dry.body.clusters.map((cl: any) => [cl.keeper.id, cl.duplicates.map((m: any) => m.id).sort(), cl.similarity]);
    expect(clusters).toEqual([
      [b.id, [a.id, c.id].sort(), 1],
      [f.id, [d.id, e.id].sort(), 1],
    ]);
    expect((await t.api('GET', `${col('d')}/memories`)).body).toHaveLength(7);

    const run = await t.api('POST', `${col('d')}/dedup`, { dry_run: false, threshold: 0.95 });
    expect(run.body.deleted).toBe(4);
    expect(run.body.ids.sort()).toEqual([a.id, c.id, d.id, e.id].sort());
    const left = (await t.api('GET', `${col('d')}/memories`)).body.map((m: any) => m.id);
    expect(left.sort()).toEqual([b.id, f.id, left.find((id: string) => ![b.id, f.id].includes(id))].sort());
    expect(left).toHaveLength(3);
    expect((await t.api('GET', `/v1/memory/collections/d`)).body.memory_count).toBe(3);
  });

  it('never deletes a pinned memory, and hands supersession links to the keeper', async () => {
    const t = await tenant();
    const p1 = await create(t, 'pins', 'Door code 4455.');
    const p2 = await create(t, 'pins', 'Door code 4455.');
    for (const m of [p1, p2]) await t.api('POST', `${col('pins')}/memories/${m.id}/pin`, { pinned: true });
    expect((await t.api('POST', `${col('pins')}/dedup`, { dry_run: false })).body).toEqual({ deleted: 0, ids: [] });

    await rememberSync(t, 'link', 'Ana lives in Lisbon.');
    const porto = (await rememberSync(t, 'link', 'Ana lives in Porto.')).body.memories[0];
    const keeper = await create(t, 'link', 'Ana lives in Porto.', { importance: 0.9, category: 'fact' });
    const run = await t.api('POST', `${col('link')}/dedup`, { dry_run: false });
    expect(run.body.ids).toEqual([porto.id]);
    const pairs = (await t.api('GET', `${col('link')}/contradictions`)).body;
    expect(pairs.map((p: any) => [p.current.id, p.superseded.text])).toEqual([[keeper.id, 'Ana lives in Lisbon.']]);
  });

  it('validates threshold and dry_run; a read-only key may only dry-run', async () => {
    const t = await tenant();
    await create(t, 'v', 'x y z');
    expect((await t.api('POST', `${col('v')}/dedup`, { threshold: 1.5 })).status).toBe(422);
    expect((await t.api('POST', `${col('v')}/dedup`, { dry_run: 'yes' })).status).toBe(422);
    expect((await t.api('POST', `${col('missing')}/dedup`, {})).status).toBe(404);
    const ro = await t.newKey('reader', true);
    expect((await t.api('POST', `${col('v')}/dedup`, { dry_run: false }, ro.key)).status).toBe(403);
    expect((await t.api('POST', `${col('v')}/dedup`, {}, ro.key)).status).toBe(200);
    expect((await t.api('POST', `${col('v')}/archive-stale`, { dry_run: false }, ro.key)).status).toBe(403);
    expect((await t.api('POST', `${col('v')}/archive-stale`, {}, ro.key)).status).toBe(200);
  });
});

describe('archive-stale', () => {
  it('dry run reports, the real run archives; pinned and archived are skipped', async () => {
    const t = await tenant();
    const old = await create(t, 'a', 'An old note.');
    const oldPinned = await create(t, 'a', 'An old pinned note.');
    const oldArchived = await create(t, 'a', 'An old archived note.');
    const fresh = await create(t, 'a', 'A fresh note.');
    await t.api('POST', `${col('a')}/memories/${oldPinned.id}/pin`, { pinned: true });
    await t.api('POST', `${col('a')}/memories/${oldArchived.id}/archive`, { archived: true });
    await backdate(t, [old.id, oldPinned.id, oldArchived.id], 100);

    expect((await t.api('POST', `${col('a')}/archive-stale`, {})).body).toEqual({ would_archive: 1, ids: [old.id] });
    expect((await t.api('POST', `${col('a')}/archive-stale`, { older_than_days: 200 })).body).toEqual({ would_archive: 0, ids: [] });
    expect((await t.api('GET', `${col('a')}/memories/${old.id}`)).body.archived).toBe(false);

    expect((await t.api('POST', `${col('a')}/archive-stale`, { dry_run: false })).body).toEqual({ archived: 1, ids: [old.id] });
    expect((await t.api('GET', `${col('a')}/memories/${old.id}`)).body.archived).toBe(true);
    expect((await t.api('GET', `${col('a')}/memories/${fresh.id}`)).body.archived).toBe(false);
    expect((await t.api('POST', `${col('a')}/archive-stale`, { dry_run: false })).body).toEqual({ archived: 0, ids: [] });
    expect((await t.api('POST', `${col('a')}/archive-stale`, { dry_run: false, older_than_days: 0 })).body.ids).toEqual([fresh.id]);

    expect((await t.api('POST', `${col('a')}/archive-stale`, { older_than_days: -1 })).status).toBe(422);
    expect((await t.api('POST', `${col('a')}/archive-stale`, { older_than_days: 1.5 })).status).toBe(422);
  });
});

describe('health', () => {
  it('counts every state of a collection', async () => {
    const t = await tenant();
    const past = new Date(Date.now() - 1_000).toISOString();
    await rememberSync(t, 'h', `Ana lives in Lisbon. Ana likes jazz. Ana is in Rome (until ${past}).`);
    await rememberSync(t, 'h', 'Ana lives in Porto.');
    const note = await create(t, 'h', 'A plain note.');
    const pinned = await create(t, 'h', 'A pinned note.');
    await t.api('POST', `${col('h')}/memories/${pinned.id}/pin`, { pinned: true });
    await backdate(t, [note.id, pinned.id], 40);

    const res = await t.api('GET', `${col('h')}/health?stale_days=30`);
    // 2 raw memories (archived) + Lisbon (superseded) + jazz + Rome (expired) + Porto + 2 notes.
    expect(res.body).toEqual({
      collection: 'h',
      exists: true,
      total: 8,
      current: 6,
      archived: 2,
      pinned: 1,
      stale: 1,
      expired: 1,
      supersessions: 1,
      categories: { fact: 3, other: 4, preference: 1 },
      needs_attention: 3,
      jobs: { failed_extractions: 0, stuck_extractions: 0, failed_files: 0, stuck_files: 0, failed_proxy_stores: 0, failed_graph_fills: 0 },
    });
    expect((await t.api('GET', `${col('h')}/health`)).body.stale).toBe(0);
  });

  it('an unknown collection is exists=false with zero counts; bad stale_days is 422', async () => {
    const t = await tenant();
    expect((await t.api('GET', `${col('ghost')}/health`)).body).toEqual({
      collection: 'ghost',
      exists: false,
      total: 0,
      current: 0,
      archived: 0,
      pinned: 0,
      stale: 0,
      expired: 0,
      supersessions: 0,
      categories: {},
      needs_attention: 0,
      jobs: { failed_extractions: 0, stuck_extractions: 0, failed_files: 0, stuck_files: 0, failed_proxy_stores: 0, failed_graph_fills: 0 },
    });
    expect((await t.api('GET', `${col('ghost')}/health?stale_days=-1`)).status).toBe(422);
    const ro = await t.newKey('reader', true);
    expect((await t.api('GET', `${col('ghost')}/health`, undefined, ro.key)).status).toBe(200);
  });
});

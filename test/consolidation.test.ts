import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDueRuns } from '../src/services/consolidation/run.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { DUPLICATES, seedNotes } from './support/consolidation.ts';
import { col } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

let server: TestServer;
let llmServer: TestServer;
let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
  [server, llmServer] = await Promise.all([
    startServer({ ORGMEM_EMBEDDER: 'hash' }),
    startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model', ORGMEM_LLM_MAX_RETRIES: '0' }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), llmServer?.close()]);
  await fake?.close();
});

const KEPT = 'Ana from support prefers answers in Portuguese.';

async function seeded(s: TestServer) {
  const t = await newTenant(s.url, s.adminKey);
  const { add, ...seeded } = await seedNotes(s, t);
  const kept = await add(KEPT, { category: 'preference' });
  return { t, ...seeded, kept };
}

/** Every memory of the collection, archived ones included, as the API shows them, by id. */
async function snapshot(t: Tenant) {
  const list = (await t.api('GET', `${col('notes')}/memories?include_archived=true&limit=200`)).body as Array<{ id: string }>;
  const collection = (await t.api('GET', col('notes'))).body as { memory_count: number; archived_count: number };
  return { memories: Object.fromEntries(list.map((m) => [m.id, m])), counts: [collection.memory_count, collection.archived_count] };
}

async function runOpen(t: Tenant, body: Record<string, unknown> = {}) {
  const started = await t.api('POST', `${col('notes')}/consolidate`, body);
  expect(started.status).toBe(202);
  expect(started.body.state).toBe('running');
  let set = started.body;
  for (let i = 0; i < 200 && set.state === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    set = (await t.api('GET', `${col('notes')}/changesets/${started.body.id}`)).body;
  }
  expect(set.state, JSON.stringify(set)).toBe('open');
  return set;
}

const byKind = (set: any, kind: string) => set.changes.filter((c: any) => c.kind === kind);

describe('a consolidation run', () => {
  it('proposes merges, a supersession and an archive with their evidence, and changes nothing by itself', async () => {
    const { t, dups, oldPort, newPort, noise, kept } = await seeded(server);
    const before = await snapshot(t);
    const set = await runOpen(t);
    expect(set.scanned).toBe(7);
    expect(set.trigger).toBe('request');

    const [merge] = byKind(set, 'merge');
    expect(byKind(set, 'merge')).toHaveLength(1);
    expect([merge.proposal.keep_id, ...merge.proposal.memory_ids].sort()).toEqual(dups.map((d) => d.id).sort());
    expect(merge.evidence.memories.map((m: any) => m.text).sort()).toEqual([...DUPLICATES].sort());
    expect(merge.evidence.similarity).toBeGreaterThanOrEqual(0.9);
    expect(merge.evidence.proposed_by).toBe('heuristic');
    expect(merge.state).toBe('proposed');

    expect(byKind(set, 'supersede')).toMatchObject([{ proposal: { keep_id: newPort.id, memory_ids: [oldPort.id] } }]);
    expect(byKind(set, 'archive')).toMatchObject([{ proposal: { memory_ids: [noise.id] } }]);
    // The memory that repeats nothing, is recent and recalled-worthy is in no change.
    expect(set.changes.flatMap((c: any) => c.evidence.memories.map((m: any) => m.id))).not.toContain(kept.id);
    expect(set.counts).toMatchObject({ proposed: set.changes.length, applied: 0 });

    expect(await snapshot(t)).toEqual(before);
    const listed = (await t.api('GET', `${col('notes')}/changesets`)).body.changesets;
    expect(listed).toMatchObject([{ id: set.id, state: 'open', counts: { proposed: set.changes.length } }]);
    expect((await t.api('GET', `${col('notes')}/changesets?state=reviewed`)).body.changesets).toEqual([]);
  });

  it('never merges memories that name other values, nor the memories of two end users', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const add = async (text: string, container_tag?: string) =>
      (await t.api('POST', `${col('notes')}/memories`, { text, category: 'fact', ...(container_tag ? { container_tag } : {}) })).body as { id: string };
    // One pattern, two values in two places: alike for an embedder, two facts for a reader.
    await add('The travel budget of the Berlin office is capped at 4000 euros since December.');
    await add('The travel budget of the Berlin office is capped at 45000 euros since August.');
    await add('Nadia keeps a border collie at the office on Fridays.');
    await add('Elena keeps a border collie at the office on Fridays.');
    const ana = await add('Prefers answers in Portuguese.', 'ana');
    await add('Prefers answers in Portuguese.', 'ben');
    const again = await add('Prefers answers in Portuguese!', 'ana');
    const set = await runOpen(t);
    expect(byKind(set, 'merge').map((c: any) => [c.proposal.keep_id, ...c.proposal.memory_ids].sort())).toEqual([[ana.id, again.id].sort()]);
    expect(byKind(set, 'supersede')).toEqual([]);
  });

  it('applies some changes, then the rest; undoing every one leaves every memory as it was', async () => {
    const { t, dups, oldPort, noise } = await seeded(server);
    const before = await snapshot(t);
    const set = await runOpen(t);
    const [merge] = byKind(set, 'merge');

    const some = await t.api('POST', `${col('notes')}/changesets/${set.id}/apply`, { changes: [merge.id] });
    expect(some.status).toBe(200);
    expect(some.body.state).toBe('open');
    expect(some.body.counts).toMatchObject({ applied: 1, proposed: set.changes.length - 1 });
    const merged = (await snapshot(t)).memories;
    for (const id of merge.proposal.memory_ids) expect(merged[id]).toMatchObject({ archived: true });
    expect(merged[merge.proposal.keep_id]).toMatchObject({ archived: false });
    // The merged memories are kept and name what replaced them.
    const history = (await t.api('GET', `${col('notes')}/memories/${merge.proposal.memory_ids[0]}`)).body;
    expect(history.superseded_at).not.toBeNull();
    expect(dups.map((d) => d.id)).toContain(merge.proposal.keep_id);

    const rest = await t.api('POST', `${col('notes')}/changesets/${set.id}/apply`, {});
    expect(rest.body.state).toBe('reviewed');
    expect(rest.body.counts).toMatchObject({ applied: set.changes.length, proposed: 0 });
    const after = (await snapshot(t)).memories;
    expect(after[oldPort.id]).toMatchObject({ superseded_at: expect.any(String) });
    expect(after[noise.id]).toMatchObject({ archived: true });
    const search = (await t.api('POST', `${col('notes')}/search`, { query: 'payments service deploys Friday' })).body.results;
    expect(search.filter((r: any) => dups.some((d) => d.id === r.id))).toHaveLength(1);

    for (const c of rest.body.changes) {
      const undone = await t.api('POST', `${col('notes')}/changesets/${set.id}/changes/${c.id}/undo`);
      expect(undone.status).toBe(200);
    }
    expect(await snapshot(t)).toEqual(before);
    const final = (await t.api('GET', `${col('notes')}/changesets/${set.id}`)).body;
    expect(final.counts).toMatchObject({ undone: set.changes.length });
  });

  it('fails a change whose memory moved on since the proposal, and never touches a pinned memory', async () => {
    const { t, oldPort, noise } = await seeded(server);
    const set = await runOpen(t);
    const [supersede] = byKind(set, 'supersede');
    const [archive] = byKind(set, 'archive');
    await t.api('PATCH', `${col('notes')}/memories/${oldPort.id}`, { importance: 0.9 });
    await t.api('POST', `${col('notes')}/memories/${noise.id}/pin`, { pinned: true });
    const before = await snapshot(t);
    const res = await t.api('POST', `${col('notes')}/changesets/${set.id}/apply`, { changes: [supersede.id, archive.id] });
    expect(res.status).toBe(200);
    const outcome = Object.fromEntries(res.body.changes.map((c: any) => [c.id, c]));
    expect(outcome[supersede.id]).toMatchObject({ state: 'failed', detail: `Memory ${oldPort.id} changed since the change was proposed` });
    expect(outcome[archive.id]).toMatchObject({ state: 'failed' });
    expect(outcome[archive.id].detail).toMatch(/changed since|pinned/);
    expect(await snapshot(t)).toEqual(before);
    // A failed change is decided: it cannot be undone.
    expect((await t.api('POST', `${col('notes')}/changesets/${set.id}/changes/${supersede.id}/undo`)).status).toBe(409);
  });

  it('refuses an undo that would overwrite a later edit', async () => {
    const { t } = await seeded(server);
    const set = await runOpen(t);
    const [merge] = byKind(set, 'merge');
    await t.api('POST', `${col('notes')}/changesets/${set.id}/apply`, { changes: [merge.id] });
    await t.api('PATCH', `${col('notes')}/memories/${merge.proposal.memory_ids[0]}`, { importance: 0.2 });
    const undo = await t.api('POST', `${col('notes')}/changesets/${set.id}/changes/${merge.id}/undo`);
    expect(undo.status).toBe(409);
    expect(undo.body.detail).toBe(`Memory ${merge.proposal.memory_ids[0]} changed since the change was applied: undo would overwrite that edit`);
  });

  it('rejects changes without touching a memory, and answers each bad request with its reason', async () => {
    const { t } = await seeded(server);
    const set = await runOpen(t);
    const before = await snapshot(t);
    const rejected = await t.api('POST', `${col('notes')}/changesets/${set.id}/reject`, {});
    expect(rejected.body).toMatchObject({ state: 'reviewed', counts: { rejected: set.changes.length, proposed: 0 } });
    const applied = await t.api('POST', `${col('notes')}/changesets/${set.id}/apply`, {});
    expect(applied.body.counts.applied).toBe(0);
    expect(await snapshot(t)).toEqual(before);

    const base = `${col('notes')}/changesets`;
    expect((await t.api('GET', `${base}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await t.api('GET', `${base}/not-a-uuid`)).status).toBe(404);
    const stranger = await t.api('POST', `${base}/${set.id}/apply`, { changes: ['00000000-0000-4000-8000-000000000000'] });
    expect(stranger.status).toBe(422);
    expect(JSON.stringify(stranger.body)).toMatch(/is not a change of this change set/);
    expect((await t.api('POST', `${base}/${set.id}/changes/${set.changes[0].id}/undo`)).status).toBe(409);
    expect((await t.api('POST', `${base}/${set.id}/changes/00000000-0000-4000-8000-000000000000/undo`)).status).toBe(404);
    expect((await t.api('POST', `${col('missing')}/consolidate`, {})).status).toBe(404);
    expect((await t.api('POST', `${col('notes')}/consolidate`, { similarity: 2 })).status).toBe(422);
    // Review is an admin's: an agent key may start a run and read it, not apply it.
    const agent = await t.newKey('curator');
    expect((await t.api('POST', `${col('notes')}/consolidate`, {}, agent.key)).status).toBe(202);
    expect((await t.api('POST', `${base}/${set.id}/apply`, {}, agent.key)).status).toBe(403);
    // Another tenant sees none of it.
    const other = await newTenant(server.url, server.adminKey);
    await other.api('POST', `${col('notes')}/memories`, { text: 'x y z' });
    expect((await other.api('GET', `${base}/${set.id}`)).status).toBe(404);
  });

  it('applies the kinds a collection names in auto_apply itself, recorded and undoable; a schedule starts runs', async () => {
    const { t } = await seeded(server);
    const put = await t.api('PUT', `${col('notes')}/consolidation`, { schedule: 'daily', auto_apply: ['merge'] });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ schedule: 'daily', auto_apply: ['merge'], next_run_at: expect.any(String) });
    expect(Date.parse(put.body.next_run_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const before = await snapshot(t);
    const set = await runOpen(t);
    let merge = byKind(set, 'merge')[0];
    for (let i = 0; i < 100 && merge.state === 'proposed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      merge = byKind((await t.api('GET', `${col('notes')}/changesets/${set.id}`)).body, 'merge')[0];
    }
    expect(merge.state).toBe('applied');
    const current = (await t.api('GET', `${col('notes')}/changesets/${set.id}`)).body;
    expect(byKind(current, 'supersede')[0].state).toBe('proposed');
    await t.api('POST', `${col('notes')}/changesets/${set.id}/changes/${merge.id}/undo`);
    expect(await snapshot(t)).toEqual(before);

    await server.app.db.query(`update consolidation_settings set next_run_at = now() - interval '1 minute' where tenant_id = $1`, [t.id]);
    expect(await startDueRuns(server.app)).toBeGreaterThanOrEqual(1);
    const scheduled = (await t.api('GET', `${col('notes')}/changesets`)).body.changesets.find((c: any) => c.trigger === 'schedule');
    expect(scheduled).toBeDefined();
    expect((await t.api('GET', `${col('notes')}/consolidation`)).body.next_run_at).not.toBe(put.body.next_run_at);
    const off = await t.api('PUT', `${col('notes')}/consolidation`, { schedule: 'off' });
    expect(off.body).toEqual({ schedule: 'off', auto_apply: [], next_run_at: null });
    expect((await t.api('PUT', `${col('notes')}/consolidation`, { schedule: 'hourly' })).status).toBe(422);
  });
});

describe('a consolidation run with an LLM', () => {
  it('takes its valid proposals, and a reply that fails its schema aborts that change, not the run', async () => {
    const t = await newTenant(llmServer.url, llmServer.adminKey);
    const add = async (text: string) => (await t.api('POST', `${col('notes')}/memories`, { text, category: 'fact' })).body as { id: string };
    // Two groups of alike memories that the offline rules (at similarity 0.99) leave whole.
    const a1 = await add('The on-call rotation of the payments team changes every Monday morning.');
    const a2 = await add('The on-call rotation of the payments team changes on Monday mornings.');
    const b1 = await add('Customer Acme renews its enterprise contract in March of every year.');
    const b2 = await add('Customer Acme renews its enterprise contract every year in March.');
    let badOnce = 0;
    fake.on('consolidate', (call) => {
      const shown = JSON.parse(call.user) as { memories: Array<{ id: string }> };
      const ids = shown.memories.map((m) => m.id);
      // Group b: an id it was not shown, then (asked again) no JSON at all.
      if (ids.includes(b1.id) && !badOnce++) return { json: { changes: [{ kind: 'merge', keep_id: 'not-shown', memory_ids: [b2.id], reason: 'same' }] } };
      if (ids.includes(b1.id)) return { content: 'I would merge them.' };
      return { json: { changes: [{ kind: 'merge', keep_id: a1.id, memory_ids: [a2.id], reason: 'Both say the rotation changes on Monday.' }] } };
    });
    const set = await runOpen(t, { similarity: 0.99 });
    const llm = set.changes.filter((c: any) => c.evidence.proposed_by === 'llm');
    expect(llm).toMatchObject([
      { kind: 'merge', proposal: { keep_id: a1.id, memory_ids: [a2.id] }, evidence: { reason: 'Both say the rotation changes on Monday.' } },
    ]);
    expect(set.errors).toHaveLength(1);
    expect(set.errors[0].detail).toContain(b1.id);
    expect(set.errors[0].detail).toMatch(/was left out: /);
    expect(fake.callsNamed('consolidate').filter((c) => c.user.includes(b1.id))).toHaveLength(2);
    expect(fake.callsNamed('consolidate').length).toBeGreaterThanOrEqual(2);
  });
});

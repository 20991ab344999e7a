import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { startReceiver } from './fakes/webhook-receiver.ts';
import { mcpClient, trpcClient } from './support/transports.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { col } from './support/graph.ts';
import { importAndWait } from './support/imports.ts';
import { memoryTimeTypes, undoMillisecondTimes } from './support/database.ts';
import { startServer, type TestServer } from './support/server.ts';
import { toVectorLiteral } from '../src/ports/db/db.ts';
import { vectorCandidates } from '../src/services/search/candidates.ts';
import { NO_FILTERS } from '../src/services/search/scope.ts';
import { migrate } from '../src/maintenance/migrate.ts';

/**
 * When and where from (docs/time.md): the three times on every memory, supersession closing a
 * validity where its successor's starts, retraction, and search as of a moment. The fake LLM
 * extracts one fact per sentence and judges "Dana lives in Porto." to replace the Lisbon fact.
 */
let fake: FakeLlm;
let server: TestServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake, [
    ['Dana lives in Porto.', 'Dana lives in Lisbon.'],
    ['Eva lives in Milan.', 'Eva lives in Rome.'],
    ['Eva lives in Turin.', 'Eva lives in Milan.'],
  ]);
  receiver = await startReceiver(() => 204);
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await fake?.close();
});

const T1 = '2024-01-01T00:00:00.000Z';
const T3 = '2024-06-01T00:00:00.000Z';
const T4 = '2024-09-01T00:00:00.000Z';

async function searchTexts(t: Tenant, body: Record<string, unknown>): Promise<string[]> {
  const res = await t.api('POST', `${col('life')}/search`, { query: 'Dana', mode: 'text', min_score: 0, limit: 50, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results.map((r: { text: string }) => r.text).sort();
}

describe('a fact’s life', () => {
  let t: Tenant;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await newTenant(server.url, server.adminKey, { admin: true });
    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
    const lisbon = await t.api('POST', `${col('life')}/remember?sync=true`, { content: 'Dana lives in Lisbon.', observed_at: T1 });
    expect(lisbon.status).toBe(200);
    ids.lisbon = lisbon.body.memories[0].id;
    const porto = await t.api('POST', `${col('life')}/remember?sync=true`, { content: 'Dana lives in Porto.', observed_at: T3 });
    expect(porto.body.memories[0]).toMatchObject({ relation: 'supersedes', supersedes_id: ids.lisbon });
    ids.porto = porto.body.memories[0].id;
    for (const [name, text] of [
      ['acme', 'Dana works at Acme.'],
      ['boat', 'Dana owns a boat.'],
    ]) {
      const res = await t.api('POST', `${col('life')}/memories`, { text, observed_at: T1 });
      expect(res.status).toBe(201);
      ids[name!] = res.body.id;
    }
    const ended = await t.api('POST', `${col('life')}/memories/${ids.acme}/retract`, { how: 'ended', at: T4, reason: 'changed jobs' });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ valid_to: T4, retraction: { how: 'ended', at: T4, reason: 'changed jobs' } });
    const wrong = await t.api('POST', `${col('life')}/memories/${ids.boat}/retract`, { how: 'wrong' });
    expect(wrong.body).toMatchObject({ valid_to: null, retraction: { how: 'wrong', at: null, reason: null } });
  });

  it('extraction resolves dates against the text’s observed_at, and the facts carry it', async () => {
    const call = fake.callsNamed('extract_facts').find((c) => c.user === 'Dana lives in Porto.')!;
    expect(JSON.stringify(call.body.messages[0])).toContain(`The reference date (when the text was written) is ${T3}.`);
    const porto = (await t.api('GET', `${col('life')}/memories/${ids.porto}`)).body;
    expect(porto).toMatchObject({ observed_at: T3, valid_from: T3, valid_to: null, provenance: { kind: 'remember' } });
    expect(porto.provenance.memory_id).toBe(porto.metadata.remembered_from);
  });

  it('supersession closed the older fact at the newer one’s valid_from, and deleted nothing', async () => {
    const lisbon = await t.api('GET', `${col('life')}/memories/${ids.lisbon}`);
    expect(lisbon.status).toBe(200);
    expect(lisbon.body).toMatchObject({ observed_at: T1, valid_from: T1, valid_to: T3, expires_at: T3 });
    expect(Date.parse(lisbon.body.superseded_at)).toBeGreaterThan(Date.parse(T3));
  });

  it('answers what held at each of six moments, and what holds now by default', async () => {
    const at = (as_of: string) => searchTexts(t, { as_of });
    expect(await at('2023-12-01T00:00:00Z')).toEqual([]);
    expect(await at('2024-03-01T00:00:00Z')).toEqual(['Dana lives in Lisbon.', 'Dana works at Acme.']);
    // A validity ends at valid_to, exclusive: at T3 the Porto fact holds, Lisbon no longer.
    expect(await at(T3)).toEqual(['Dana lives in Porto.', 'Dana works at Acme.']);
    expect(await at('2024-08-31T23:59:59Z')).toEqual(['Dana lives in Porto.', 'Dana works at Acme.']);
    expect(await at('2024-10-01T02:00:00+02:00')).toEqual(['Dana lives in Porto.']);
    expect(await searchTexts(t, {})).toEqual(['Dana lives in Porto.']);
    // The all-collection search reads the same rule.
    const all = await t.api('POST', '/v1/memory/search', { query: 'Dana', mode: 'text', min_score: 0, as_of: '2024-03-01T00:00:00Z' });
    expect(all.body.results.map((r: { text: string }) => r.text).sort()).toEqual(['Dana lives in Lisbon.', 'Dana works at Acme.']);
  });

  it('filters on observed_at and puts the times and provenance on every result', async () => {
    expect(await searchTexts(t, { observed_after: '2024-02-01T00:00:00Z', as_of: '2024-07-01T00:00:00Z' })).toEqual(['Dana lives in Porto.']);
    expect(await searchTexts(t, { observed_before: '2024-02-01T00:00:00Z', as_of: '2024-03-01T00:00:00Z' })).toEqual([
      'Dana lives in Lisbon.',
      'Dana works at Acme.',
    ]);
    const res = await t.api('POST', `${col('life')}/search`, { query: 'Dana', mode: 'text', min_score: 0, as_of: '2024-03-01T00:00:00Z' });
    const acme = res.body.results.find((r: { id: string }) => r.id === ids.acme);
    expect(acme).toMatchObject({ observed_at: T1, valid_from: T1, valid_to: T4, provenance: { kind: 'api' } });
  });

  it('audits retractions and sends memory.retracted', async () => {
    const audit = (await t.api('GET', '/v1/memory/admin/audit')).body as Array<{ action: string; target: string }>;
    expect(audit.filter((e) => e.action === 'memories.retract').map((e) => e.target)).toEqual([
      `collections/life/memories/${ids.boat}/retract`,
      `collections/life/memories/${ids.acme}/retract`,
    ]);
    const retracted = () =>
      receiver.received.map((r) => JSON.parse(r.body)).filter((e) => e.type === 'memory.retracted' && [ids.acme, ids.boat].includes(e.data.memory.id));
    await receiver.waitFor(0, 15_000, () => retracted().length >= 2);
    expect(
      retracted()
        .map((e) => e.data.memory.retraction.how)
        .sort(),
    ).toEqual(['ended', 'wrong']);
  });

  it('refuses what cannot be retracted, with a clear detail', async () => {
    const again = await t.api('POST', `${col('life')}/memories/${ids.boat}/retract`, { how: 'ended' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already retracted/);
    const porto = `${col('life')}/memories/${ids.porto}/retract`;
    expect((await t.api('POST', porto, { how: 'wrong', at: T4 })).body.detail).toMatch(/^Invalid request: at: /);
    const early = await t.api('POST', porto, { how: 'ended', at: T1 });
    expect(early.status).toBe(422);
    expect(early.body.detail).toMatch(/later than the memory's valid_from/);
    expect((await t.api('POST', porto, { how: 'forgotten' })).status).toBe(422);
    expect((await t.api('POST', porto, { how: 'ended', at: 'last week' })).status).toBe(422);
    expect((await t.api('POST', `${col('life')}/memories/01900000-0000-7000-8000-000000000000/retract`, { how: 'wrong' })).status).toBe(404);
    // Undoing is idempotent: a memory not retracted is answered unchanged.
    expect((await t.api('DELETE', porto)).body).toMatchObject({ id: ids.porto, retraction: null });
    // None of these changed the fact.
    expect((await t.api('GET', `${col('life')}/memories/${ids.porto}`)).body).toMatchObject({ valid_to: null, retraction: null });
  });

  it('lists retracted memories, the latest retraction first, on REST and as the MCP tool list_retractions', async () => {
    const listed = await t.api('GET', `${col('life')}/retractions`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((m: { id: string }) => m.id)).toEqual([ids.boat, ids.acme]);
    expect(listed.body[1]).toMatchObject({ text: 'Dana works at Acme.', valid_to: T4, retraction: { how: 'ended', at: T4, reason: 'changed jobs' } });
    expect((await t.api('GET', `${col('life')}/retractions?limit=1`)).body.map((m: { id: string }) => m.id)).toEqual([ids.boat]);
    expect((await t.api('GET', `${col('nowhere')}/retractions`)).status).toBe(404);
    expect((await t.api('GET', `${col('life')}/retractions?limit=0`)).status).toBe(422);
    const mcp = await mcpClient(server.url, t.key);
    try {
      const tool = await mcp.callTool({ name: 'list_retractions', arguments: { collection: 'life' } });
      expect(tool.isError).toBeFalsy();
      expect((tool.structuredContent as { items: Array<{ id: string }> }).items.map((m) => m.id)).toEqual([ids.boat, ids.acme]);
    } finally {
      await mcp.close();
    }
  });

  it('undoing a retraction gives the memory back as it was', async () => {
    const boat = await t.api('DELETE', `${col('life')}/memories/${ids.boat}/retract`);
    expect(boat.status).toBe(200);
    expect(boat.body).toMatchObject({ retraction: null, valid_to: null });
    const acme = await t.api('DELETE', `${col('life')}/memories/${ids.acme}/retract`);
    expect(acme.body).toMatchObject({ retraction: null, valid_to: null });
    expect(await searchTexts(t, {})).toEqual(['Dana lives in Porto.', 'Dana owns a boat.', 'Dana works at Acme.']);
    expect(await searchTexts(t, { as_of: '2024-03-01T00:00:00Z' })).toEqual(['Dana lives in Lisbon.', 'Dana owns a boat.', 'Dana works at Acme.']);
    expect((await t.api('GET', `${col('life')}/retractions`)).body).toEqual([]);
  });

  it('retracts and undoes as the MCP tools retract_memory and unretract_memory', async () => {
    const mcp = await mcpClient(server.url, t.key);
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const res = await mcp.callTool({ name, arguments: { collection: 'life', id: ids.boat, ...args } });
        expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
        return res.structuredContent as { retraction: { how: string; reason: string | null } | null };
      };
      expect((await call('retract_memory', { how: 'wrong', reason: 'sold years ago' })).retraction).toMatchObject({ how: 'wrong', reason: 'sold years ago' });
      expect(await searchTexts(t, {})).toEqual(['Dana lives in Porto.', 'Dana works at Acme.']);
      // Already retracted: a tool error with REST's status.
      const again = await mcp.callTool({ name: 'retract_memory', arguments: { collection: 'life', id: ids.boat, how: 'ended' } });
      expect(again.isError).toBe(true);
      expect(JSON.stringify(again.content)).toContain('409');
      expect((await call('unretract_memory', {})).retraction).toBeNull();
      expect(await searchTexts(t, {})).toEqual(['Dana lives in Porto.', 'Dana owns a boat.', 'Dana works at Acme.']);
      const tools = (await mcp.listTools()).tools.find((tool) => tool.name === 'unretract_memory');
      expect(tools?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    } finally {
      await mcp.close();
    }
  });
});

describe('supersession history, both ways', () => {
  it('answers the newer facts that superseded a memory and the older ones it superseded, on REST, tRPC and MCP', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const id: Record<string, string> = {};
    for (const [city, at] of [
      ['Rome', T1],
      ['Milan', T3],
      ['Turin', T4],
    ] as const) {
      const res = await t.api('POST', `${col('moves')}/remember?sync=true`, { content: `Eva lives in ${city}.`, observed_at: at });
      expect(res.status).toBe(200);
      id[city] = res.body.memories[0].id;
    }
    type Entry = { memory: { id: string; valid_from: string; valid_to: string | null }; superseded_by: string | null; steps: number };
    const history = async (of: string, key?: string) => {
      const res = await t.api('GET', `${col('moves')}/memories/${of}/history`, undefined, key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const brief = (e: Entry) => [e.memory.id, e.superseded_by, e.steps];
      return { memory: res.body.memory.id, superseded_by: res.body.superseded_by, newer: res.body.newer.map(brief), older: res.body.older.map(brief) };
    };
    expect(await history(id.Rome!)).toEqual({
      memory: id.Rome,
      superseded_by: id.Milan,
      newer: [
        [id.Milan, id.Turin, 1],
        [id.Turin, null, 2],
      ],
      older: [],
    });
    expect(await history(id.Milan!)).toEqual({ memory: id.Milan, superseded_by: id.Turin, newer: [[id.Turin, null, 1]], older: [[id.Rome, id.Milan, 1]] });
    expect(await history(id.Turin!)).toEqual({
      memory: id.Turin,
      superseded_by: null,
      newer: [],
      older: [
        [id.Milan, id.Turin, 1],
        [id.Rome, id.Milan, 2],
      ],
    });
    // Each entry carries its validity: the chain's times meet where one fact replaced the other.
    const full = (await t.api('GET', `${col('moves')}/memories/${id.Turin}/history`)).body;
    expect(full.older.map((e: Entry) => [e.memory.valid_from, e.memory.valid_to])).toEqual([
      [T3, T4],
      [T1, T3],
    ]);

    // Followed into a collection the memory moved to, and left out where the key may not read.
    expect((await t.api('POST', `${col('moves')}/memories/${id.Milan}/move`, { to_collection: 'private' })).status).toBe(200);
    expect((await history(id.Rome!)).newer).toEqual([
      [id.Milan, id.Turin, 1],
      [id.Turin, null, 2],
    ]);
    const agent = await t.newKey('reader', true);
    const ownerId = (await t.api('GET', '/v1/memory/agents')).body.find((a: { label: string }) => a.label === 'default').id;
    expect((await t.api('PUT', `${col('private')}/grants`, { agent_key_id: ownerId, can_read: true, can_write: true })).status).toBe(200);
    expect(await history(id.Rome!, agent.key)).toEqual({ memory: id.Rome, superseded_by: id.Milan, newer: [[id.Turin, null, 2]], older: [] });
    expect((await t.api('GET', `${col('private')}/memories/${id.Milan}/history`, undefined, agent.key)).status).toBe(403);

    // The same on tRPC and as the MCP tool get_memory_history.
    const rpc = await trpcClient(server.url, t.key).memories.history.query({ collection: 'moves', id: id.Turin! });
    expect(rpc.older.map((e) => e.memory.id)).toEqual([id.Milan, id.Rome]);
    const mcp = await mcpClient(server.url, t.key);
    try {
      const tool = await mcp.callTool({ name: 'get_memory_history', arguments: { collection: 'moves', id: id.Rome } });
      expect(tool.isError).toBeFalsy();
      expect((tool.structuredContent as { newer: Entry[] }).newer.map((e) => e.memory.id)).toEqual([id.Milan, id.Turin]);
    } finally {
      await mcp.close();
    }
    expect((await t.api('GET', `${col('moves')}/memories/01900000-0000-7000-8000-000000000000/history`)).status).toBe(404);
    expect((await t.api('GET', `${col('moves')}/memories/not-an-id/history`)).status).toBe(404);
  });
});

describe('times on create', () => {
  it('defaults observed_at and valid_from to now, takes them when given, and refuses a validity that ends before it starts', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const plain = (await t.api('POST', `${col('times')}/memories`, { text: 'no times given' })).body;
    expect(plain.observed_at).toBe(plain.created_at);
    expect(plain.valid_from).toBe(plain.created_at);
    expect(plain).toMatchObject({ valid_to: null, expires_at: null, superseded_at: null, retraction: null, provenance: { kind: 'api' } });

    const given = await t.api('POST', `${col('times')}/memories`, { text: 'mail from last year', observed_at: '2023-05-02T10:00:00+02:00' });
    expect(given.body).toMatchObject({ observed_at: '2023-05-02T08:00:00.000Z', valid_from: '2023-05-02T08:00:00.000Z' });

    const backwards = await t.api('POST', `${col('times')}/memories`, { text: 'x', valid_from: '2024-02-01T00:00:00Z', valid_to: '2024-01-01T00:00:00Z' });
    expect(backwards.status).toBe(422);
    expect(backwards.body.detail).toMatch(/^Invalid request: valid_to: must be later than valid_from/);
    const bulk = await t.api('POST', `${col('times')}/memories/bulk`, [
      { text: 'ok' },
      { text: 'bad', observed_at: '2024-02-01T00:00:00Z', valid_to: '2024-01-01T00:00:00Z' },
    ]);
    expect(bulk.status).toBe(422);
    expect(bulk.body.errors[0].path).toBe('1.valid_to');
    expect((await t.api('POST', `${col('times')}/memories`, { text: 'x', observed_at: 'yesterday' })).status).toBe(422);
    // Nothing of the refused calls was stored.
    expect((await t.api('GET', `${col('times')}/memories`)).body).toHaveLength(2);
  });

  it('stores times at the precision it answers them: as_of at the created_at it answered finds the memory', async () => {
    const t = await newTenant(server.url, server.adminKey);
    for (const text of ['Fay rents a flat', 'Fay rents a car', 'Fay rents a bike']) {
      const made = (await t.api('POST', `${col('moments')}/memories`, { text })).body;
      const end = new Date(Date.parse(made.created_at) + 1000).toISOString();
      expect((await t.api('POST', `${col('moments')}/memories/${made.id}/retract`, { how: 'ended', at: end })).status).toBe(200);
      const asOf = async (at: number) => {
        const res = await t.api('POST', `${col('moments')}/search`, { query: text, mode: 'text', min_score: 0, as_of: new Date(at).toISOString() });
        return res.body.results.map((r: { id: string }) => r.id);
      };
      const start = Date.parse(made.created_at);
      // Its validity is [created_at, end): the first moment in, the moment before it and its end out.
      expect(await asOf(start)).toContain(made.id);
      expect(await asOf(start - 1)).not.toContain(made.id);
      expect(await asOf(Date.parse(end))).not.toContain(made.id);
    }
  });

  it('finds a memory by the day it happened, in words, in UTC', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const write = async (text: string, observed_at: string) => (await t.api('POST', `${col('days')}/memories`, { text, observed_at })).body.id;
    const picnic = await write('Went to the picnic with the kids', '2023-05-08T13:56:00Z');
    // 23:30 on 7 May in New York is 8 May in UTC: the day is the UTC one.
    const late = await write('Finished the pottery class', '2023-05-07T23:30:00-04:00');
    const other = await write('Went hiking with the kids', '2023-06-08T09:00:00Z');
    const found = async (query: string) => {
      const res = await t.api('POST', `${col('days')}/search`, { query, mode: 'text', min_score: 0, limit: 10 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.results.map((r: { id: string }) => r.id);
    };
    // Both of 8 May first; 8 June shares the day's number and the year only.
    const may8 = await found('8 May 2023');
    expect(may8.slice(0, 2).sort()).toEqual([picnic, late].sort());
    expect(may8[2]).toBe(other);
    expect(await found('June')).toEqual([other]);
    // Bulk writes (one statement for the batch) get them as well.
    const bulk = await t.api('POST', `${col('days')}/memories/bulk`, [{ text: 'Planted tomatoes', observed_at: '2024-01-15T12:00:00Z' }]);
    expect(bulk.status).toBe(201);
    expect(await found('January')).toEqual(bulk.body.ids);
  });

  it('the feedback search counts memories of the best matches’ day nearer, in the exact scan and through the graph', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const dims = server.app.embedder.dimensions;
    // Unit vectors at a chosen cosine from the first axis, each leaning on an axis of its own.
    const at = (cos: number, axis: number) => Array.from({ length: dims }, (_, i) => (i === 0 ? cos : i === axis ? Math.sqrt(1 - cos * cos) : 0));
    const put = async (text: string, observed_at: string, vector: number[]) => {
      const id = (await t.api('POST', `${col('pull')}/memories`, { text, observed_at })).body.id as string;
      await server.app.db.query('update memories set embedding = $1::vector where tenant_id = $2 and id = $3', [toVectorLiteral(vector), t.id, id]);
      return id;
    };
    const seed = await put('the best match', '2023-05-08T10:00:00Z', at(1, 1));
    const sameDay = await put('a turn of that day', '2023-05-08T18:00:00Z', at(0.9, 2)); // distance 0.10
    const otherDay = await put('a turn of another day', '2023-05-09T10:00:00Z', at(0.92, 3)); // distance 0.08
    await put('far away', '2023-05-09T11:00:00Z', at(0.5, 4));
    const query = toVectorLiteral(at(1, 1));
    for (const memoryCount of [4, 1e9]) {
      // 4: the scope is read exactly; a billion: the HNSW graph answers.
      const scope = { tenantId: t.id, collections: ['pull'], memoryCount, tableRows: memoryCount, graphRows: memoryCount };
      const ids = async (feedbackIds?: string[]) =>
        (await vectorCandidates(server.app, scope, NO_FILTERS, { literal: query, feedbackIds }, 3)).map((r) => r.id);
      expect(await ids()).toEqual([seed, otherDay, sameDay]);
      expect(await ids([seed])).toEqual([seed, sameDay, otherDay]);
    }
  });

  it('signs a link to the file a memory came from only for a file key of the tenant', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const other = await newTenant(server.url, server.adminKey);
    const stolen = `${other.id}/files/01900000-0000-7000-8000-000000000000/secret.txt`;
    const own = `${t.id}/files/01900000-0000-7000-8000-000000000000/mine.txt`;
    const made = await t.api('POST', `${col('prov')}/memories/bulk`, [
      { text: 'points at another tenant', metadata: { key: stolen, file: 'secret.txt' } },
      { text: 'points at its own tenant', metadata: { key: own, file: 'mine.txt' } },
    ]);
    expect(made.status).toBe(201);
    const [theirs, mine] = await Promise.all(made.body.ids.map(async (id: string) => (await t.api('GET', `${col('prov')}/memories/${id}`)).body));
    expect(theirs.provenance).toEqual({ kind: 'file', file_key: stolen, file_name: 'secret.txt' });
    expect(mine.provenance).toMatchObject({ kind: 'file', file_key: own, file_url: expect.stringContaining('/v1/blobs/') });
    // Lists and search never sign.
    const listed = (await t.api('GET', `${col('prov')}/memories`)).body as Array<{ provenance: Record<string, unknown> }>;
    expect(listed.every((m) => m.provenance.file_url === undefined)).toBe(true);
  });

  it('import takes the times, and expires_at as the former name of valid_to', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await importAndWait(server.url, t.key, {
      body: {
        memories: [
          { text: 'old export item', collection: 'imp', expires_at: '2031-01-01T00:00:00Z' },
          { text: 'new export item', collection: 'imp', observed_at: '2022-01-01T00:00:00Z', valid_to: '2030-01-01T00:00:00Z' },
          { text: 'backwards', collection: 'imp', observed_at: '2022-01-01T00:00:00Z', valid_to: '2021-01-01T00:00:00Z' },
        ],
      },
    });
    expect(res.body).toMatchObject({ imported: 2, skipped: 1, errors: [{ index: 2, detail: expect.stringMatching(/^valid_to: must be later/) }] });
    const listed = (await t.api('GET', `${col('imp')}/memories`)).body as Array<{ text: string; observed_at: string; valid_to: string }>;
    const byText = new Map(listed.map((m) => [m.text, m]));
    expect(byText.get('old export item')!.valid_to).toBe('2031-01-01T00:00:00.000Z');
    expect(byText.get('new export item')).toMatchObject({ observed_at: '2022-01-01T00:00:00.000Z', valid_to: '2030-01-01T00:00:00.000Z' });
  });
});

describe('migration 043: times at the API’s precision', () => {
  it('truncates the stored times to the milliseconds the API answered, and keeps the day in the text search', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const { id } = (await t.api('POST', `${col('diary')}/memories`, { text: 'Gus keeps a diary' })).body;
    expect(await memoryTimeTypes(server.app.db)).toEqual(['timestamp(3) with time zone']);

    // Back to before 043: microseconds, and a time that rounding would carry into the next day.
    await undoMillisecondTimes(server.app.db);
    expect(await memoryTimeTypes(server.app.db)).toEqual(['timestamp with time zone']);
    await server.app.db.query(
      `update memories set created_at = '2024-03-01 10:00:00.123789+00', valid_from = '2024-03-01 10:00:00.123789+00',
         observed_at = '2023-05-08 23:59:59.9996+00', valid_to = '2031-01-01 00:00:00.0009+00' where tenant_id = $1 and id = $2`,
      [t.id, id],
    );
    await migrate(server.app.db, server.app.embedder.dimensions, server.app.config.search.vectorIndex);

    expect(await memoryTimeTypes(server.app.db)).toEqual(['timestamp(3) with time zone']);
    expect((await t.api('GET', `${col('diary')}/memories/${id}`)).body).toMatchObject({
      created_at: '2024-03-01T10:00:00.123Z',
      valid_from: '2024-03-01T10:00:00.123Z',
      observed_at: '2023-05-08T23:59:59.999Z',
      valid_to: '2031-01-01T00:00:00.000Z',
    });
    const found = await t.api('POST', `${col('diary')}/search`, { query: 'diary', mode: 'text', min_score: 0, as_of: '2024-03-01T10:00:00.123Z' });
    expect(found.body.results.map((r: { id: string }) => r.id)).toEqual([id]);
    // The text search document, made again, has the day the memory happened, not the next one.
    const [day] = await server.app.db.query<{ on8: boolean; on9: boolean }>(
      `select tsv @@ plainto_tsquery('english', '8 May 2023') as on8, tsv @@ plainto_tsquery('english', '9 May 2023') as on9 from memories where tenant_id = $1 and id = $2`,
      [t.id, id],
    );
    expect(day).toEqual({ on8: true, on9: false });
  });
});

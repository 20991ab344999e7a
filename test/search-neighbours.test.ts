import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, shared, type Tenant } from './support/client.ts';
import type { ToolResult } from './support/mcp.ts';
import { mcpClient, postForm, trpcClient } from './support/transports.ts';

/**
 * `neighbours` (docs/search.md, "Neighbours"): each result comes with the memories next to it in
 * its thread (metadata thread, seq) or file (key, chunk), in its own collection only, current
 * ones only, on every front end search is on.
 */
const { url, adminKey } = shared();

/** A conversation as a client writes one: each turn with its thread and its place in it. */
const TURNS = [
  'Mira: I finally booked the trip we talked about',
  'Jon: Where are you going?',
  'Mira: Lisbon, for the tile museum and the trams',
  'Jon: Sounds great, when do you leave?',
  'Mira: Next Friday, back on the 14th',
  'Jon: Bring me a pastel de nata',
  'Mira: Deal',
];

type Hit = { id: string; text: string; score: number; neighbours?: Array<{ id: string; text: string; offset: number; score?: number }> };
const search = (t: Tenant, body: Record<string, unknown>, collection = 'chat', key?: string) =>
  t.api('POST', `/v1/memory/collections/${collection}/search`, body, key);
const byOffset = (hit: Hit) => hit.neighbours!.map((n) => [n.offset, n.text]);

describe('search neighbours', () => {
  let t: Tenant;
  let ids: string[];

  beforeAll(async () => {
    t = await newTenant(url, adminKey);
    const turns = TURNS.map((text, i) => ({ text, metadata: { thread: 'mira-jon', seq: i + 1 } }));
    // Another thread in the same collection, at the same places: never a neighbour of the first.
    const other = [1, 2, 3, 4, 5].map((seq) => ({ text: `Ops note ${seq}: the backup job ran`, metadata: { thread: 'ops', seq } }));
    const res = await t.api('POST', '/v1/memory/collections/chat/memories/bulk', [...turns, ...other, { text: 'A loose note about the tile museum' }]);
    expect(res.status).toBe(201);
    ids = res.body.ids;
  });

  it('returns the memories up to n places around each result in its thread, in order, without scores', async () => {
    const res = await search(t, { query: 'Lisbon tile museum trams', mode: 'text', limit: 1, neighbours: 2 });
    expect(res.status).toBe(200);
    const [hit] = res.body.results as Hit[];
    expect(hit!.id).toBe(ids[2]);
    expect(byOffset(hit!)).toEqual([
      [-2, TURNS[0]],
      [-1, TURNS[1]],
      [1, TURNS[3]],
      [2, TURNS[4]],
    ]);
    expect(hit!.neighbours![0]).not.toHaveProperty('score');
    expect(Object.keys(hit!.neighbours![0]!).sort()).toEqual(
      [
        'category',
        'created_at',
        'flagged',
        'id',
        'images',
        'importance',
        'metadata',
        'observed_at',
        'offset',
        'provenance',
        'source',
        'text',
        'trust',
        'valid_from',
        'valid_to',
      ].sort(),
    );
  });

  it('stops at the ends of a thread; a memory with no place gets none; without the option there is no field', async () => {
    const first = await search(t, { query: 'finally booked the trip', mode: 'text', limit: 1, neighbours: 3 });
    expect(byOffset(first.body.results[0])).toEqual([
      [1, TURNS[1]],
      [2, TURNS[2]],
      [3, TURNS[3]],
    ]);
    const loose = await search(t, { query: 'loose note', mode: 'text', limit: 1, neighbours: 1 });
    expect(loose.body.results[0]).toMatchObject({ text: 'A loose note about the tile museum', neighbours: [] });
    for (const body of [{}, { neighbours: 0 }]) {
      const plain = await search(t, { query: 'Lisbon tile museum', mode: 'text', ...body });
      expect(plain.status).toBe(200);
      for (const r of plain.body.results) expect(r).not.toHaveProperty('neighbours');
    }
  });

  it('gives every result its own neighbours, in every mode and on all-collection search', async () => {
    for (const mode of ['hybrid', 'vector', 'text']) {
      const res = await t.api('POST', '/v1/memory/search', { query: 'backup job ran', mode, limit: 10, min_score: 0, neighbours: 1 });
      expect(res.status).toBe(200);
      for (const hit of res.body.results as Array<Hit & { metadata: { thread?: string; seq?: number } }>) {
        const { thread, seq } = hit.metadata;
        if (!thread) continue;
        const last = thread === 'ops' ? 5 : TURNS.length;
        expect(hit.neighbours!.map((n) => n.offset)).toEqual([seq! > 1 && -1, seq! < last && 1].filter((o) => o !== false));
        for (const n of hit.neighbours!) expect(n.text.startsWith('Ops note')).toBe(thread === 'ops');
      }
    }
  });

  it('ignores the content filters but follows currentness and include_archived', async () => {
    const own = await newTenant(url, adminKey);
    const res = await own.api(
      'POST',
      '/v1/memory/collections/chat/memories/bulk',
      ['one', 'two', 'three', 'four'].map((w, i) => ({
        text: `turn ${w} of the planning call`,
        category: i === 1 ? 'decision' : 'episode',
        metadata: { thread: 'call', seq: i + 1 },
      })),
    );
    const [one, , three, four] = res.body.ids as string[];
    const filtered = await search(own, { query: 'turn two planning', mode: 'text', category: 'decision', neighbours: 1 });
    expect(filtered.body.results.map((r: Hit) => r.text)).toEqual(['turn two of the planning call']);
    expect(byOffset(filtered.body.results[0])).toEqual([
      [-1, 'turn one of the planning call'],
      [1, 'turn three of the planning call'],
    ]);
    expect((await own.api('POST', `/v1/memory/collections/chat/memories/${one}/archive`, { archived: true })).status).toBe(200);
    expect((await own.api('POST', `/v1/memory/collections/chat/memories/${three}/retract`, { how: 'wrong' })).status).toBe(200);
    const current = await search(own, { query: 'turn two planning', mode: 'text', category: 'decision', neighbours: 2 });
    expect(byOffset(current.body.results[0])).toEqual([[2, 'turn four of the planning call']]);
    const archived = await search(own, { query: 'turn two planning', mode: 'text', category: 'decision', neighbours: 2, include_archived: true });
    expect(byOffset(archived.body.results[0])).toEqual([
      [-1, 'turn one of the planning call'],
      [2, 'turn four of the planning call'],
    ]);
    expect(archived.body.results[0].neighbours[1].id).toBe(four);
  });

  it("a file's chunks are neighbours by key and chunk", async () => {
    const own = await newTenant(url, adminKey);
    // Three paragraphs of at most 1,630 characters: three chunks of at most 2,000 (docs/files.md).
    const paragraphs = ['alpha', 'bravo', 'charlie'].map((w) => `${w} `.repeat(200) + `The ${w} section ends here.`);
    const data = Buffer.from(paragraphs.join('\n\n')).toString('base64');
    const dropped = await postForm(url, own.key, '/v1/memory/collections/docs/drop', { files: [{ filename: 'guide.txt', content_type: 'text/plain', data }] });
    expect(dropped.status).toBe(201);
    expect(dropped.body.files[0].chunks).toBe(3);
    const res = await search(own, { query: 'bravo section', mode: 'text', limit: 1, neighbours: 1 }, 'docs');
    const [hit] = res.body.results as Array<Hit & { provenance: { chunk: number } }>;
    expect(hit!.provenance.chunk).toBe(2);
    expect(hit!.neighbours!.map((n) => [n.offset, (n as unknown as { provenance: { chunk: number } }).provenance.chunk])).toEqual([
      [-1, 1],
      [1, 3],
    ]);
  });

  it('never crosses into another collection, so a restricted one never leaks through a neighbour', async () => {
    const own = await newTenant(url, adminKey);
    // Words, not numbers, tell the turns apart: a memory's text side also holds its date's words
    // (sql/036), and a day of the month would match a number in the query.
    const word = ['', 'alder', 'birch', 'cedar', 'damson'];
    const turn = (seq: number) => ({ text: `shared thread turn ${word[seq]} about the harbour`, metadata: { thread: 'shared', seq } });
    expect((await own.api('POST', '/v1/memory/collections/open/memories/bulk', [turn(1), turn(2)])).status).toBe(201);
    expect((await own.api('POST', '/v1/memory/collections/secret/memories/bulk', [turn(3), turn(4)])).status).toBe(201);
    const owner = await own.newKey('owner');
    const reader = await own.newKey('reader');
    expect((await own.api('PUT', '/v1/memory/collections/secret/grants', { agent_key_id: owner.id, can_read: true, can_write: true })).status).toBe(200);
    const res = await own.api('POST', '/v1/memory/search', { query: 'shared thread turn birch harbour', mode: 'text', limit: 5, neighbours: 2 }, reader.key);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { collection: string }) => r.collection)).toEqual(['open', 'open']);
    for (const hit of res.body.results as Hit[]) for (const n of hit.neighbours!) expect(n.text).toMatch(/turn (alder|birch) /);
    // Even the key that may read both gets only the result's own collection.
    const both = await own.api('POST', '/v1/memory/search', { query: 'shared thread turn cedar harbour', mode: 'text', limit: 1, neighbours: 2 }, owner.key);
    expect(both.body.results[0]).toMatchObject({ collection: 'secret', metadata: { seq: 3 } });
    expect(byOffset(both.body.results[0])).toEqual([[1, 'shared thread turn damson about the harbour']]);
  });

  it('is the same option over tRPC and MCP', async () => {
    const rpc = await trpcClient(url, t.key).search.collection.query({
      collection: 'chat',
      query: 'Lisbon tile museum trams',
      mode: 'text',
      limit: 1,
      neighbours: 1,
    });
    expect(rpc.results[0]!.neighbours!.map((n) => n.offset)).toEqual([-1, 1]);
    const client = await mcpClient(url, t.key);
    try {
      const found = (await client.callTool({
        name: 'search_memory',
        arguments: { query: 'Lisbon tile museum trams', mode: 'text', limit: 1, neighbours: 1 },
      })) as ToolResult;
      expect(found.isError).toBeFalsy();
      expect(found.structuredContent!.results[0].neighbours.map((n: { text: string }) => n.text)).toEqual([TURNS[1], TURNS[3]]);
      const bad = (await client.callTool({ name: 'search_memory', arguments: { query: 'Lisbon', neighbours: 6 } })) as ToolResult;
      expect(bad.content[0]!.text).toMatch(/^422: Invalid request: neighbours/);
    } finally {
      await client.close();
    }
  });

  it.each([6, -1, 1.5, '2', null])('422 naming the field for neighbours %j, on both endpoints', async (neighbours) => {
    for (const path of ['/v1/memory/collections/chat/search', '/v1/memory/search']) {
      const res = await t.api('POST', path, { query: 'Lisbon', neighbours });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/neighbours/);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('neighbours');
    }
  });
});

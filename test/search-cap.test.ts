import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillGraph } from '../src/services/memory/graph-tenants.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * A collection larger than the full-text match cap and the exact-scan bound: the text side ranks
 * a sample there, the vector side walks the HNSW graph (the plain vector search alongside the
 * text side), and filters still find rare matches (by an exact scan) and common ones (by the
 * graph). Every tenant is in the graph (ORGMEM_GRAPH_FROM 0, filled before searching).
 */
let server: TestServer;
let t: Tenant;
let priya: string;
let tagged: string;
let teamA: Set<string>;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_SEARCH_TEXT_CAP: '50', ORGMEM_SEARCH_EXACT_MAX: '30', ORGMEM_GRAPH_FROM: '0' });
  t = await newTenant(server.url, server.adminKey);
  // The first 60 notes belong to team-a: a filter matching more memories than the exact bound.
  const filler = Array.from({ length: 120 }, (_, i) => ({
    text: `Weekly report note ${i}: numbers look fine this week`,
    container_tag: i < 60 ? 'team-a' : null,
  }));
  teamA = new Set();
  for (const [i, part] of [filler.slice(0, 60), filler.slice(60)].entries()) {
    const res = await t.api('POST', '/v1/memory/collections/big/memories/bulk', part);
    expect(res.status).toBe(201);
    if (i === 0) res.body.ids.forEach((id: string) => teamA.add(id));
  }
  const res = await t.api('POST', '/v1/memory/collections/big/memories/bulk', [
    { text: 'Priya Patel owns the weekly report and sends it every Friday' },
    { text: 'Weekly report archive lives in the finance drive', container_tag: 'user-rare' },
  ]);
  [priya, tagged] = res.body.ids;
  await fillGraph(server.app, t.id);
});
afterAll(() => server?.close());

describe('search over more matches than the text cap', () => {
  it('hybrid and vector still rank the relevant memory first', async () => {
    for (const mode of ['hybrid', 'vector']) {
      const res = await t.api('POST', '/v1/memory/collections/big/search', { query: 'Priya Patel owns the weekly report', mode, min_score: 0 });
      expect(res.status).toBe(200);
      expect(res.body.results[0].id).toBe(priya);
    }
  });

  it("adds no other word forms in a scope over the cap, where a common form ('went') would crowd the sample", async () => {
    const own = await newTenant(server.url, server.adminKey);
    expect((await own.api('POST', '/v1/memory/collections/trips/memories', { text: 'Priya Patel booked the ferry to the islands' })).status).toBe(201);
    const later = Array.from({ length: 60 }, (_, i) => ({ text: `Someone went home early on day ${i}` }));
    expect((await own.api('POST', '/v1/memory/collections/trips/memories/bulk', later)).status).toBe(201);
    // min_score 1 leaves the vector side out: the text side alone, which ranks the newest 50 matches here.
    const res = await own.api('POST', '/v1/memory/collections/trips/search', { query: 'where did Priya Patel go', mode: 'hybrid', min_score: 1 });
    expect(res.body.results[0].text).toBe('Priya Patel booked the ferry to the islands');
  });

  it('text mode ranks within the cap and never comes back with more than limit', async () => {
    const res = await t.api('POST', '/v1/memory/collections/big/search', { query: 'weekly report', mode: 'text', limit: 50 });
    expect(res.body.results).toHaveLength(50);
  });

  it('a rare filter finds its match in every mode', async () => {
    for (const mode of ['hybrid', 'vector', 'text']) {
      const res = await t.api('POST', '/v1/memory/collections/big/search', { query: 'weekly report', mode, container_tag: 'user-rare', min_score: 0 });
      expect(res.body.results.map((r: { id: string }) => r.id)).toEqual([tagged]);
    }
  });

  it('a filter matching more than the exact-scan bound fills the page from the indexes, only with matches', async () => {
    for (const mode of ['hybrid', 'vector', 'text']) {
      const res = await t.api('POST', '/v1/memory/collections/big/search', {
        query: 'numbers look fine',
        mode,
        container_tag: 'team-a',
        limit: 40,
        min_score: 0,
      });
      expect(res.status).toBe(200);
      expect(res.body.results).toHaveLength(40);
      expect(res.body.results.every((r: { id: string }) => teamA.has(r.id))).toBe(true);
    }
  });
});

describe('a broad filter samples its first rows for the text side', () => {
  let sampled: TestServer;
  let u: Tenant;
  const oldest = new Set<string>();
  const tagged = new Set<string>();

  beforeAll(async () => {
    // Bound 45: a filter of 70 is broad, and the text side's sample reads its first 45 rows,
    // enough for the 20 candidates a page of 5 wants, so the GIN index is not asked.
    sampled = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_SEARCH_TEXT_CAP: '50', ORGMEM_SEARCH_EXACT_MAX: '45', ORGMEM_GRAPH_FROM: '0' });
    u = await newTenant(sampled.url, sampled.adminKey);
    // Only the newest notes say "urgent": a plan reading the newest matches would rank them first.
    const notes = Array.from({ length: 100 }, (_, i) => ({
      text: `Standup note ${i}: the release train is on time${i >= 80 ? ', urgent' : ''}`,
      container_tag: i % 10 < 7 ? 'team-b' : null,
    }));
    const res = await u.api('POST', '/v1/memory/collections/big/memories/bulk', notes);
    expect(res.status).toBe(201);
    res.body.ids.forEach((id: string, i: number) => {
      if (notes[i]!.container_tag) tagged.add(id);
      if (notes[i]!.container_tag && tagged.size <= 45) oldest.add(id);
    });
    await fillGraph(sampled.app, u.id);
  });
  afterAll(() => sampled?.close());

  it('fills the page with matches of the filter, from the rows it read', async () => {
    for (const query of ['urgent: is the release train on time', 'standup release urgent']) {
      const res = await u.api('POST', '/v1/memory/collections/big/search', { query, mode: 'text', container_tag: 'team-b', limit: 5 });
      expect(res.status).toBe(200);
      expect(res.body.results).toHaveLength(5);
      // The sample is the filter's first 45 rows (its index's order: the oldest here); the GIN
      // plan would have taken the newest matches instead, and ranked the urgent ones first.
      expect(res.body.results.every((r: { id: string }) => oldest.has(r.id))).toBe(true);
    }
    const hybrid = await u.api('POST', '/v1/memory/collections/big/search', { query: 'release train', container_tag: 'team-b', limit: 10, min_score: 0 });
    expect(hybrid.body.results).toHaveLength(10);
    expect(hybrid.body.results.every((r: { id: string }) => tagged.has(r.id))).toBe(true);
  });
});

describe("a rare word's older matches beside the newest sample", () => {
  let rare: TestServer;
  let u: Tenant;
  const PRIYA = 'Priya Patel booked the weekly ferry trip to the islands';

  beforeAll(async () => {
    // A cap over the sample's 250, as the default is; its own server, since the word statistics
    // are read once a minute per process (word-shares.ts).
    rare = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_SEARCH_TEXT_CAP: '300' });
    u = await newTenant(rare.url, rare.adminKey);
    expect((await u.api('POST', '/v1/memory/collections/trips/memories', { text: PRIYA })).status).toBe(201);
    // 321 memories, over the cap; 261 match the query's words, over the sample and within the cap.
    for (let part = 0; part < 4; part++) {
      const later = Array.from({ length: 80 }, (_, i) =>
        part * 80 + i < 260 ? { text: `Weekly ferry trip report ${part}-${i}: every boat left on schedule` } : { text: `Lunch menu ${i}: soup and bread` },
      );
      expect((await u.api('POST', '/v1/memory/collections/trips/memories/bulk', later)).status).toBe(201);
    }
    await rare.app.db.exec('analyze memories');
  });
  afterAll(() => rare?.close());

  it('ranks the oldest memory holding the rare word through the indexes, which the newest 250 matches leave out', async () => {
    const res = await u.api('POST', '/v1/memory/collections/trips/search', { query: 'Priya weekly ferry trip', mode: 'text', limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.results[0].text).toBe(PRIYA);
    expect(res.body.results).toHaveLength(5);
  });

  it('ranks every match of an exact read up to the cap, not the newest 250', async () => {
    // min_score 1 leaves the vector side out: the text side alone, from the exact read of all 321.
    const res = await u.api('POST', '/v1/memory/collections/trips/search', { query: 'Priya weekly ferry trip', mode: 'hybrid', min_score: 1, limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.results[0].text).toBe(PRIYA);
  });
});

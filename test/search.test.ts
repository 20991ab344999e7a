import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, shared, type Tenant } from './support/client.ts';

/** A small corpus with distinct topics, so "the obviously relevant memory" is unambiguous. */
const CORPUS = [
  { text: 'Ana prefers oat milk flat whites every morning before standup', category: 'preference', container_tag: 'user-ana' },
  { text: 'The billing service deploy failed because the TLS certificate had expired', category: 'episode', metadata: { team: 'payments', severity: 'high' } },
  { text: 'Ben spends his weekends bouldering at the climbing gym downtown', category: 'fact', metadata: { team: 'infra' } },
  { text: 'The quarterly budget review meeting moved to Thursday afternoon', category: 'episode', metadata: { team: 'finance' } },
  { text: 'Chloe is allergic to peanuts, so team lunches must avoid them', category: 'fact', container_tag: 'user-chloe' },
  { text: 'The office wifi password rotates on the first day of every month', category: 'other' },
];

const search = (t: Tenant, body: Record<string, unknown>, collection = 'notes') => t.api('POST', `/v1/memory/collections/${collection}/search`, body);
const texts = (res: { body: { results: Array<{ text: string }> } }) => res.body.results.map((r) => r.text);

describe('search', () => {
  let t: Tenant;
  let ids: string[];

  beforeAll(async () => {
    const { url, adminKey } = shared();
    t = await newTenant(url, adminKey);
    const res = await t.api('POST', '/v1/memory/collections/notes/memories/bulk', CORPUS);
    expect(res.status).toBe(201);
    ids = res.body.ids;
  });

  it.each([
    ['vector', 'what kind of coffee does Ana drink', 0],
    ['text', 'TLS certificate expired', 1],
    ['hybrid', 'who goes climbing on weekends', 2],
    ['hybrid', 'food allergies to keep in mind for lunch', 4],
  ] as const)('%s mode ranks the relevant memory first (%s)', async (mode, query, index) => {
    const res = await search(t, { query, mode, limit: 3, min_score: 0 });
    expect(res.status).toBe(200);
    expect(res.body.results[0].id).toBe(ids[index]);
    expect(res.body.cached).toBe(false);
    for (const r of res.body.results) {
      expect(r.score).toBeGreaterThanOrEqual(0);
      expect(r.score).toBeLessThanOrEqual(1);
    }
    // Scores are ordered best first.
    const scores = res.body.results.map((r: { score: number }) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('answers exactly the documented shape (no collection field on collection search)', async () => {
    const res = await search(t, { query: 'budget review meeting' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['cached', 'query_embedding_ms', 'results', 'search_ms']);
    expect(Object.keys(res.body.results[0]).sort()).toEqual(
      [
        'category',
        'created_at',
        'flagged',
        'id',
        'images',
        'importance',
        'metadata',
        'observed_at',
        'provenance',
        'score',
        'source',
        'text',
        'trust',
        'valid_from',
        'valid_to',
      ].sort(),
    );
    expect(typeof res.body.search_ms).toBe('number');
    expect(res.body.query_embedding_ms).toBeGreaterThanOrEqual(0);
  });

  it('text mode only returns memories sharing a word with the query', async () => {
    const res = await search(t, { query: 'peanuts', mode: 'text', limit: 10 });
    expect(texts(res)).toEqual([CORPUS[4]!.text]);
    const none = await search(t, { query: 'the of and', mode: 'text' });
    expect(none.status).toBe(200);
    expect(none.body.results).toEqual([]);
  });

  it('min_score drops vector matches below the similarity threshold', async () => {
    const all = await search(t, { query: 'what kind of coffee does Ana drink', mode: 'vector', limit: 10, min_score: 0 });
    expect(all.body.results.length).toBe(CORPUS.length);
    const strict = await search(t, { query: 'what kind of coffee does Ana drink', mode: 'vector', limit: 10, min_score: 0.99 });
    expect(strict.body.results).toEqual([]);
  });

  describe('filters apply in every mode', () => {
    it.each(['hybrid', 'vector', 'text'] as const)('%s: category, container_tag, metadata_filter', async (mode) => {
      // A query that matches other memories better, so a filter applied after a top-k cut would come back empty.
      const cat = await search(t, { query: 'the team deploy meeting budget', mode, category: 'preference', limit: 5, min_score: 0 });
      const tag = await search(t, { query: 'the team deploy meeting budget lunches', mode, container_tag: 'user-chloe', limit: 5, min_score: 0 });
      const meta = await search(t, { query: 'deploy meeting budget weekends', mode, metadata_filter: { team: 'infra' }, limit: 5, min_score: 0 });
      if (mode === 'text') {
        // Text mode needs a shared word; these queries share one only with the filtered-in memories below.
        expect(texts(tag)).toEqual([CORPUS[4]!.text]);
        expect(texts(meta)).toEqual([CORPUS[2]!.text]);
      } else {
        expect(texts(cat)).toEqual([CORPUS[0]!.text]);
        expect(texts(tag)).toEqual([CORPUS[4]!.text]);
        expect(texts(meta)).toEqual([CORPUS[2]!.text]);
      }
      const multi = await search(t, {
        query: 'deploy failed',
        mode,
        metadata_filter: { team: 'payments', severity: 'high' },
        category: 'episode',
        min_score: 0,
      });
      expect(texts(multi)).toEqual([CORPUS[1]!.text]);
      const nothing = await search(t, { query: 'deploy failed', mode, metadata_filter: { team: 'payments', severity: 'low' }, min_score: 0 });
      expect(nothing.body.results).toEqual([]);
      // Several filters are one containment test on the facets index: each must hold.
      const tagged = await search(t, { query: 'team lunches peanuts', mode, category: 'fact', container_tag: 'user-chloe', min_score: 0 });
      expect(texts(tagged)).toEqual([CORPUS[4]!.text]);
      const all3 = await search(t, {
        query: 'weekends bouldering',
        mode,
        category: 'fact',
        container_tag: 'user-chloe',
        metadata_filter: { team: 'infra' },
        min_score: 0,
      });
      expect(all3.body.results).toEqual([]);
      const mismatch = await search(t, { query: 'weekends bouldering', mode, category: 'episode', metadata_filter: { team: 'infra' }, min_score: 0 });
      expect(mismatch.body.results).toEqual([]);
      const empty = await search(t, { query: 'weekends bouldering', mode, category: 'fact', metadata_filter: {}, min_score: 0 });
      expect(texts(empty)).toContain(CORPUS[2]!.text);
    });

    it('archived memories appear only with include_archived', async () => {
      const { url, adminKey } = shared();
      const own = await newTenant(url, adminKey);
      const created = await own.api('POST', '/v1/memory/collections/notes/memories', { text: 'The staging database lives in Frankfurt' });
      await own.api('POST', '/v1/memory/collections/notes/memories', { text: 'Lunch on Fridays is pizza' });
      const archive = await own.api('POST', `/v1/memory/collections/notes/memories/${created.body.id}/archive`, { archived: true });
      expect(archive.status).toBe(200);
      for (const mode of ['hybrid', 'vector', 'text']) {
        const hidden = await search(own, { query: 'staging database Frankfurt', mode, min_score: 0 });
        expect(hidden.body.results.map((r: { id: string }) => r.id)).not.toContain(created.body.id);
        const shown = await search(own, { query: 'staging database Frankfurt', mode, min_score: 0, include_archived: true });
        expect(shown.body.results[0].id).toBe(created.body.id);
      }
    });
  });

  it("searches every collection the key may read, naming each result's collection", async () => {
    const { url, adminKey } = shared();
    const own = await newTenant(url, adminKey);
    await own.api('POST', '/v1/memory/collections/work/memories', { text: 'The invoice export runs every night at 2am' });
    await own.api('POST', '/v1/memory/collections/home/memories', { text: 'The boiler service is booked for the invoice date in March' });
    const res = await own.api('POST', '/v1/memory/search', { query: 'invoice', mode: 'text', limit: 10 });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { collection: string }) => r.collection).sort()).toEqual(['home', 'work']);
    const narrowed = await own.api('POST', '/v1/memory/search', { query: 'invoice', mode: 'text', collection: 'home' });
    expect(narrowed.body.results.map((r: { collection: string }) => r.collection)).toEqual(['home']);
    const empty = await (await newTenant(url, adminKey)).api('POST', '/v1/memory/search', { query: 'invoice' });
    expect(empty.status).toBe(200);
    expect(empty.body.results).toEqual([]);
  });

  it('a missing collection is 404; a read-only key may search', async () => {
    expect((await search(t, { query: 'x' }, 'nope')).status).toBe(404);
    const ro = await t.newKey('reader', true);
    const res = await t.api('POST', '/v1/memory/collections/notes/search', { query: 'climbing gym' }, ro.key);
    expect(res.status).toBe(200);
    expect(res.body.results[0].id).toBe(ids[2]);
  });

  it.each([
    [{ query: 'x', limit: 0 }, 'limit'],
    [{ query: 'x', limit: 51 }, 'limit'],
    [{ limit: 5 }, 'query'],
    [{ query: '' }, 'query'],
    [{ query: 'x', mode: 'fuzzy' }, 'mode'],
    [{ query: 'x', min_score: 1.5 }, 'min_score'],
    [{ query: 'x', metadata_filter: 'team' }, 'metadata_filter'],
    [{ query: 'x', category: 'Not A Slug' }, 'category'],
  ])('422 for %j', async (body, field) => {
    for (const path of ['/v1/memory/collections/notes/search', '/v1/memory/search']) {
      const res = await t.api('POST', path, body);
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
  });

  it("hybrid search finds a query word's irregular forms ('go' finds 'went'); text mode stays literal", async () => {
    const { url, adminKey } = shared();
    const own = await newTenant(url, adminKey);
    // Shorter memories sharing only the name: without the other form they rank above the answer.
    const short = ['Mira likes green tea', 'Mira writes the weekly report', 'Mira has a cat', 'Mira drives a van', 'Mira plays chess'];
    const answer = 'Mira went to Lisbon with her cousins last spring to see the old trams and the tiles';
    expect(
      (
        await own.api(
          'POST',
          '/v1/memory/collections/notes/memories/bulk',
          [...short, answer].map((text) => ({ text })),
        )
      ).status,
    ).toBe(201);
    // min_score 1 leaves the vector side out: the full-text side alone decides (docs/search.md, min_score).
    const hybrid = await search(own, { query: 'Where did Mira go?', mode: 'hybrid', min_score: 1, limit: 3 });
    expect(texts(hybrid)[0]).toBe(answer);
    const text = await search(own, { query: 'Where did Mira go?', mode: 'text', limit: 3 });
    expect(texts(text)).not.toContain(answer);
    const past = await search(own, { query: 'Mira went to Lisbon', mode: 'hybrid', min_score: 1, limit: 1 });
    expect(texts(past)).toEqual([answer]);
  });

  it('accepts rewrite and rerank (ignored without an LLM)', async () => {
    const res = await search(t, { query: 'who goes climbing on weekends', rewrite: true, rerank: true, min_score: 0 });
    expect(res.status).toBe(200);
    expect(res.body.results[0].id).toBe(ids[2]);
  });
});

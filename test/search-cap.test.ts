import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * A collection larger than the full-text match cap: the text side ranks a sample there, the
 * plain vector search runs alongside it, and filters still find rare matches.
 */
let server: TestServer;
let t: Tenant;
let priya: string;
let tagged: string;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_SEARCH_TEXT_CAP: '50' });
  t = await newTenant(server.url, server.adminKey);
  const filler = Array.from({ length: 120 }, (_, i) => ({ text: `Weekly report note ${i}: numbers look fine this week` }));
  for (const part of [filler.slice(0, 60), filler.slice(60)]) {
    expect((await t.api('POST', '/v1/memory/collections/big/memories/bulk', part)).status).toBe(201);
  }
  const res = await t.api('POST', '/v1/memory/collections/big/memories/bulk', [
    { text: 'Priya Patel owns the weekly report and sends it every Friday' },
    { text: 'Weekly report archive lives in the finance drive', container_tag: 'user-rare' },
  ]);
  [priya, tagged] = res.body.ids;
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
});

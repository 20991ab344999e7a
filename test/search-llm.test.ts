import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

const S = '/v1/memory/collections/kb/search';
const TEXTS = ['The espresso machine is on the third floor', 'Quarterly revenue grew four percent', 'Parking passes are renewed every January'];

describe('search with rewrite and rerank through the LLM', () => {
  let llm: FakeLlm;
  let server: TestServer;
  let t: Tenant;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    llm = await startFakeLlm();
    server = await startServer({ ORGMEM_LLM_BASE_URL: llm.url, ORGMEM_LLM_MODEL: 'fake-model' });
    t = await newTenant(server.url, server.adminKey);
    for (const text of TEXTS) ids[text] = (await t.api('POST', '/v1/memory/collections/kb/memories', { text })).body.id;
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });

  it('rewrite: exactly one call, and retrieval uses the rewritten query', async () => {
    llm.script('rewrite_query', { json: { query: 'espresso machine floor' } });
    const before = llm.calls.length;
    // "coffee maker" shares no word with any memory: only the rewritten query finds one in text mode.
    const res = await t.api('POST', S, { query: 'where is the coffee maker', mode: 'text', rewrite: true });
    expect(res.status).toBe(200);
    const made = llm.calls.slice(before);
    expect(made.map((c) => c.name)).toEqual(['rewrite_query']);
    expect(made[0]!.user).toContain('where is the coffee maker');
    expect(res.body.results[0].id).toBe(ids[TEXTS[0]!]);
  });

  it('rerank: exactly one call, and the results come in the order the model gave', async () => {
    const plain = await t.api('POST', S, { query: 'espresso revenue parking', mode: 'hybrid', min_score: 0, limit: 3 });
    const plainOrder = plain.body.results.map((r: { id: string }) => r.id);
    expect(plainOrder).toHaveLength(3);
    const reversed = [...plainOrder].reverse();
    llm.script('rerank', { json: { ids: reversed } });
    const before = llm.calls.length;
    const res = await t.api('POST', S, { query: 'espresso revenue parking', mode: 'hybrid', min_score: 0, limit: 3, rerank: true });
    expect(llm.calls.slice(before).map((c) => c.name)).toEqual(['rerank']);
    expect(res.body.results.map((r: { id: string }) => r.id)).toEqual(reversed);
  });

  it('without the flags no LLM call is made; a failing LLM falls back to the plain result', async () => {
    const before = llm.calls.length;
    const plain = await t.api('POST', S, { query: 'parking passes', mode: 'text' });
    expect(llm.calls.length).toBe(before);
    llm.script('rewrite_query', { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    const res = await t.api('POST', S, { query: 'parking passes renewed', mode: 'text', rewrite: true });
    expect(res.status).toBe(200);
    expect(res.body.results[0].id).toBe(plain.body.results[0].id);
  });
});

describe('search with rewrite and rerank without any LLM', () => {
  it('accepts the flags and answers the plain result', async () => {
    const { url, adminKey } = shared();
    const t = await newTenant(url, adminKey);
    const m = (await t.api('POST', '/v1/memory/collections/kb/memories', { text: 'The espresso machine is on the third floor' })).body;
    const res = await t.api('POST', S, { query: 'espresso machine', rewrite: true, rerank: true });
    expect(res.status).toBe(200);
    expect(res.body.results[0].id).toBe(m.id);
  });
});

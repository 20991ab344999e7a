import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rerankCandidates, rewriteSearchQuery } from '../src/services/search/llm-steps.ts';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant } from './support/client.ts';
import { rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

let serverLlm: FakeLlm;
let platformLlm: FakeLlm;
let tenantLlm: FakeLlm;
let server: TestServer;
let platformOnly: TestServer;

const usageOf = (s: TestServer, tenantId: string) =>
  s.app.db.query<{ purpose: string; source: string; model: string; prompt_tokens: number; completion_tokens: number; cost_usd: number }>(
    'select purpose, source, model, prompt_tokens, completion_tokens, cost_usd from llm_usage where tenant_id = $1 order by at, id',
    [tenantId],
  );

beforeAll(async () => {
  [serverLlm, platformLlm, tenantLlm] = await Promise.all([startFakeLlm(), startFakeLlm(), startFakeLlm({ apiKey: 'sk-tenant' })]);
  for (const f of [serverLlm, platformLlm, tenantLlm]) playMemoryModel(f);
  const common = {
    ORGMEM_LLM_PRICES: JSON.stringify({ 'fake-model': { prompt: 2, completion: 4 } }),
    ORGMEM_LLM_TIMEOUT_MS: '500',
    ORGMEM_LLM_MAX_RETRIES: '1',
  };
  [server, platformOnly] = await Promise.all([
    startServer({ ...common, ORGMEM_LLM_BASE_URL: serverLlm.url, ORGMEM_LLM_MODEL: 'fake-model', ORGMEM_PLATFORM_LLM_BASE_URL: platformLlm.url }),
    startServer({
      ...common,
      ORGMEM_PLATFORM_LLM_BASE_URL: platformLlm.url,
      ORGMEM_PLATFORM_LLM_MODEL: 'fake-model',
      ORGMEM_PLATFORM_LLM_API_KEY: 'sk-platform',
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), platformOnly?.close()]);
  await Promise.all([serverLlm, platformLlm, tenantLlm].map((f) => f?.close()));
});

describe('LLM resolution: tenant config, then server override, then platform default', () => {
  it('uses the server override before the platform default, and the tenant config before both', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await rememberSync(t, 'r', 'Abe rides a unicycle.');
    expect(serverLlm.calls.some((c) => c.user === 'Abe rides a unicycle.')).toBe(true);
    expect(platformLlm.calls.some((c) => c.user === 'Abe rides a unicycle.')).toBe(false);

    const put = await t.api('PUT', '/v1/memory/extraction/config', { provider: 'custom', base_url: tenantLlm.url, model: 'own-model', api_key: 'sk-tenant' });
    expect(put.status).toBe(200);
    await rememberSync(t, 'r', 'Abe juggles clubs.');
    const own = tenantLlm.calls.find((c) => c.user === 'Abe juggles clubs.')!;
    expect(own.body.model).toBe('own-model');
    expect(own.authorization).toBe('Bearer sk-tenant');
    expect(serverLlm.calls.some((c) => c.user === 'Abe juggles clubs.')).toBe(false);

    expect((await t.api('DELETE', '/v1/memory/extraction/config')).status).toBe(204);
    await rememberSync(t, 'r', 'Abe collects stamps.');
    expect(serverLlm.calls.some((c) => c.user === 'Abe collects stamps.')).toBe(true);
  });

  it('falls back to the platform default when no override is set', async () => {
    const t = await newTenant(platformOnly.url, platformOnly.adminKey);
    await rememberSync(t, 'r', 'Bea restores old clocks.');
    const call = platformLlm.calls.find((c) => c.user === 'Bea restores old clocks.')!;
    expect(call.authorization).toBe('Bearer sk-platform');
    expect((await t.api('GET', '/v1/memory/extraction/config')).body).toMatchObject({ configured: false, source: 'platform' });
    const usage = await usageOf(platformOnly, t.id);
    expect(usage.map((u) => u.source)).toEqual(['platform']);
  });
});

describe('usage, retries and timeouts', () => {
  it('records every answered call with tokens and the estimated cost from the price table', async () => {
    const t = await newTenant(server.url, server.adminKey);
    serverLlm.script('extract_facts', {
      json: { facts: [{ text: 'Cal owns a canoe.', type: 'fact', expires_at: null }] },
      usage: { prompt_tokens: 1_000, completion_tokens: 500 },
    });
    await rememberSync(t, 'u', 'Cal owns a canoe.');
    expect(await usageOf(server, t.id)).toEqual([
      { purpose: 'extract_facts', source: 'server', model: 'fake-model', prompt_tokens: 1_000, completion_tokens: 500, cost_usd: (1_000 * 2 + 500 * 4) / 1e6 },
    ]);
  });

  it('retries an error status with backoff and succeeds', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const before = serverLlm.callsNamed('extract_facts').length;
    serverLlm.script('extract_facts', { status: 503, message: 'busy' });
    const res = await rememberSync(t, 'u', 'Dee sails a sloop.');
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(1);
    expect(serverLlm.callsNamed('extract_facts').length - before).toBe(2);
    expect((await usageOf(server, t.id)).map((u) => u.purpose)).toEqual(['extract_facts']);
  });

  it('times out a silent endpoint, retries, then fails cleanly', async () => {
    const t = await newTenant(server.url, server.adminKey);
    serverLlm.script('extract_facts', { hang: true }, { hang: true });
    const res = await rememberSync(t, 'u', 'Eve knits scarves.');
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/timed out/i);
    expect(await usageOf(server, t.id)).toEqual([]);
    const stored = await t.api('GET', '/v1/memory/collections/u/memories');
    expect(stored.body.map((m: any) => m.text)).toEqual(['Eve knits scarves.']);
  });
});

describe('search rewrite and rerank', () => {
  it('rewrite makes exactly one call and answers the rewritten query', async () => {
    const t = await newTenant(server.url, server.adminKey);
    serverLlm.on('rewrite_query', (call) => ({ json: { query: `${call.user} synonyms` } }));
    const before = serverLlm.callsNamed('rewrite_query').length;
    expect(await rewriteSearchQuery(server.app, t.id, 'pto policy')).toBe('pto policy synonyms');
    const calls = serverLlm.callsNamed('rewrite_query').slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body.response_format?.json_schema).toMatchObject({ name: 'rewrite_query', strict: true });
  });

  it('rerank makes exactly one call; unranked candidates follow in their order', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const candidates = [
      { id: 'a', text: 'alpha' },
      { id: 'b', text: 'beta' },
      { id: 'c', text: 'gamma' },
    ];
    serverLlm.script('rerank', { json: { ids: ['c', 'a'] } });
    const before = serverLlm.callsNamed('rerank').length;
    expect(await rerankCandidates(server.app, t.id, 'g', candidates)).toEqual(['c', 'a', 'b']);
    const calls = serverLlm.callsNamed('rerank').slice(before);
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0]!.user)).toEqual({ query: 'g', candidates });
  });

  it('rerank sends a bounded head: 50 candidates, texts clipped to 500 characters', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const many = Array.from({ length: 60 }, (_, i) => ({ id: `m${i}`, text: `${i} `.padEnd(800, 'x') }));
    serverLlm.script('rerank', { json: { ids: ['m1', 'm0'] } });
    const order = await rerankCandidates(server.app, t.id, 'q', many);
    expect(order).toEqual(['m1', 'm0', ...many.slice(2).map((c) => c.id)]);
    const sent = JSON.parse(serverLlm.callsNamed('rerank').at(-1)!.user).candidates;
    expect(sent).toHaveLength(50);
    expect(sent[0].text).toHaveLength(500);
  });

  it('answer null (plain result) when the model names unknown ids twice or fails', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const candidates = [
      { id: 'a', text: 'alpha' },
      { id: 'b', text: 'beta' },
    ];
    serverLlm.script('rerank', { json: { ids: ['zzz'] } }, { json: { ids: ['a', 'yyy'] } });
    expect(await rerankCandidates(server.app, t.id, 'q', candidates)).toBeNull();
    serverLlm.script('rewrite_query', { status: 500 }, { status: 500 });
    expect(await rewriteSearchQuery(server.app, t.id, 'q')).toBeNull();
  });
});

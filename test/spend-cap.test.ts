import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewriteSearchQuery } from '../src/services/search/llm-steps.ts';
import { extractBySentence, playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant } from './support/client.ts';
import { col, pollJob, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

let fake: FakeLlm;
let server: TestServer;
const CAP = '/v1/memory/spend-cap';

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake);
  // Every extraction costs 10,000 prompt tokens at $1,000 per million: $10 a call.
  fake.on('extract_facts', async (call) => ({ ...(await extractBySentence(call)), usage: { prompt_tokens: 10_000, completion_tokens: 0 } }));
  server = await startServer({
    ORGMEM_PLATFORM_LLM_BASE_URL: fake.url,
    ORGMEM_PLATFORM_LLM_MODEL: 'fake-model',
    ORGMEM_LLM_PRICES: JSON.stringify({ 'fake-model': { prompt: 1_000, completion: 0 } }),
  });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

describe('spend cap', () => {
  it('under the cap extracts; at the cap stores the raw memory and skips extraction', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('GET', CAP)).body).toEqual({ monthly_usd: null, spent_this_month_usd: 0, over_cap: false });
    expect((await t.api('PUT', CAP, { monthly_usd: 15 })).body).toEqual({ monthly_usd: 15, spent_this_month_usd: 0, over_cap: false });

    expect((await rememberSync(t, 'a', 'Ada builds kites.')).body.created).toBe(1);
    expect((await rememberSync(t, 'b', 'Ada flies drones.')).body.created).toBe(1);
    expect((await t.api('GET', CAP)).body).toEqual({ monthly_usd: 15, spent_this_month_usd: 20, over_cap: true });

    const calls = fake.calls.length;
    const job = await t.api('POST', `${col('c')}/remember`, { content: 'Ada races yachts.' });
    const { job: done } = await pollJob(t, job.body.job_id);
    expect(done).toMatchObject({ state: 'done', complete: true, facts: [], skipped: 'spend_cap', error: null });
    const sync = await rememberSync(t, 'c', 'Ada keeps bees.');
    expect(sync.status).toBe(200);
    expect(sync.body).toEqual({ created: 0, memories: [], skipped: 'spend_cap' });
    expect(fake.calls.length).toBe(calls);
    const raw = (await t.api('GET', `${col('c')}/memories`)).body.map((m: any) => [m.text, m.archived]);
    expect(raw.sort()).toEqual([
      ['Ada keeps bees.', false],
      ['Ada races yachts.', false],
    ]);

    // Other LLM uses fall back too: the extractive summary, the plain search query.
    const summary = await t.api('GET', `${col('c')}/summary`);
    expect(summary.status).toBe(200);
    expect(summary.body.based_on).toBe(2);
    expect(await rewriteSearchQuery(server.app, t.id, 'who races')).toBeNull();
    expect(fake.calls.length).toBe(calls);

    // Raising the cap (or clearing it) lets extraction run again.
    expect((await t.api('PUT', CAP, { monthly_usd: null })).body).toEqual({ monthly_usd: null, spent_this_month_usd: 20, over_cap: false });
    expect((await rememberSync(t, 'c', 'Ada sings in a choir.')).body.created).toBe(1);
  });

  it('never caps a tenant that uses its own extraction endpoint', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', CAP, { monthly_usd: 0 })).status).toBe(200);
    expect((await rememberSync(t, 'a', 'Bo paints murals.')).body.skipped).toBe('spend_cap');
    expect((await t.api('PUT', '/v1/memory/extraction/config', { base_url: fake.url, model: 'fake-model', api_key: 'k' })).status).toBe(200);
    const res = await rememberSync(t, 'a', 'Bo restores furniture.');
    expect(res.body).toMatchObject({ created: 1, skipped: null });
    // Spend on the tenant's own endpoint does not count against the cap.
    expect((await t.api('GET', CAP)).body.spent_this_month_usd).toBe(0);
  });

  it('validates the body and refuses read-only keys', async () => {
    const t = await newTenant(server.url, server.adminKey);
    for (const bad of [{ monthly_usd: -1 }, { monthly_usd: 'ten' }, {}]) expect((await t.api('PUT', CAP, bad)).status).toBe(422);
    const ro = await t.newKey('reader', true);
    expect((await t.api('GET', CAP, undefined, ro.key)).status).toBe(200);
    expect((await t.api('PUT', CAP, { monthly_usd: 5 }, ro.key)).status).toBe(403);
  });
});

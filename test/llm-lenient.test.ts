import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { col, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

/** Replies a real model gives that are off the schema in small ways but whose meaning is clear. */
let fake: FakeLlm;
let server: TestServer;
const tenant = () => newTenant(server.url, server.adminKey);

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake);
  server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const listAll = async (t: Tenant, c: string) => (await t.api('GET', `${col(c)}/memories?include_archived=true&limit=200`)).body as any[];

/** Remembers `content` with the next extract_facts reply scripted, and counts the calls it took. */
async function rememberWith(t: Tenant, c: string, content: string, ...replies: Parameters<FakeLlm['script']>[1][]) {
  const before = fake.callsNamed('extract_facts').length;
  fake.script('extract_facts', ...replies);
  const res = await rememberSync(t, c, content);
  return { res, extractCalls: fake.callsNamed('extract_facts').length - before };
}

describe('lenient LLM replies', () => {
  it('drops unknown keys, while the schema sent stays strict', async () => {
    const t = await tenant();
    const { res, extractCalls } = await rememberWith(t, 'keys', 'Ida speaks Finnish.', {
      json: { facts: [{ text: 'Ida speaks Finnish.', type: 'fact', expires_at: null, confidence: 0.9 }], reasoning: 'one fact' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 1, memories: [{ text: 'Ida speaks Finnish.', type: 'fact', relation: 'new', expires_at: null }] });
    expect(extractCalls).toBe(1);
    const schema = fake.callsNamed('extract_facts').at(-1)!.body.response_format!.json_schema.schema as any;
    expect(schema.properties.facts.items).toMatchObject({ additionalProperties: false, required: ['text', 'type', 'valid_from', 'expires_at', 'time_phrase'] });
  });

  it('reads a missing expires_at, and one that is not a date, as null', async () => {
    const t = await tenant();
    const { res, extractCalls } = await rememberWith(t, 'exp', 'Jon is a baker. Jon is in Rome for a while.', {
      json: {
        facts: [
          { text: 'Jon is a baker.', type: 'fact' },
          { text: 'Jon is in Rome.', type: 'episode', expires_at: 'next week-ish' },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.memories.map((m: any) => [m.text, m.expires_at])).toEqual([
      ['Jon is a baker.', null],
      ['Jon is in Rome.', null],
    ]);
    expect(extractCalls).toBe(1);
  });

  it('drops a malformed fact and stores the good ones', async () => {
    const t = await tenant();
    const { res, extractCalls } = await rememberWith(t, 'mixed', 'Kai plays chess and likes jazz.', {
      json: {
        facts: [
          { text: 'Kai plays chess.', type: 'fact', expires_at: null },
          { type: 'fact', expires_at: null },
          { text: 'Kai owns a cat.', type: 'opinion', expires_at: null },
          'Kai is tall.',
          { text: 'Kai likes jazz.', type: 'preference', expires_at: null },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(2);
    expect(res.body.memories.map((m: any) => [m.text, m.type])).toEqual([
      ['Kai plays chess.', 'fact'],
      ['Kai likes jazz.', 'preference'],
    ]);
    expect(extractCalls).toBe(1);
    expect((await t.api('GET', `${col('mixed')}/memories`)).body.map((m: any) => m.text).sort()).toEqual(['Kai likes jazz.', 'Kai plays chess.']);
  });

  it('takes the JSON out of a ```json fence with text around it', async () => {
    const t = await tenant();
    const json = JSON.stringify({ facts: [{ text: 'Lea rows at dawn.', type: 'fact', expires_at: null }] }, null, 2);
    const { res, extractCalls } = await rememberWith(t, 'fence', 'Lea rows at dawn.', {
      content: `Here are the facts:\n\`\`\`json\n${json}\n\`\`\`\nAnything else?`,
    });
    expect(res.status).toBe(200);
    expect(res.body.memories).toMatchObject([{ text: 'Lea rows at dawn.', relation: 'new' }]);
    expect(extractCalls).toBe(1);
  });

  it('ignores a judge decision about a fact it was not asked about, and a malformed one, and still supersedes', async () => {
    const t = await tenant();
    const lisbon = (await rememberSync(t, 'judge', 'Mia lives in Lisbon.')).body.memories[0].id;
    const before = fake.callsNamed('judge_facts').length;
    fake.script('judge_facts', {
      json: {
        decisions: [
          { fact_index: 0, relation: 'replaces', target_id: lisbon },
          { fact_index: 0, relation: 'supersedes', target_id: lisbon, why: 'she moved' },
          { fact_index: 2, relation: 'new', target_id: null },
        ],
      },
    });
    const res = await rememberSync(t, 'judge', 'Mia lives in Porto.');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 1, memories: [{ text: 'Mia lives in Porto.', relation: 'supersedes', supersedes_id: lisbon }] });
    expect(fake.callsNamed('judge_facts').length - before).toBe(1);
    expect((await t.api('GET', `${col('judge')}/health`)).body.supersessions).toBe(1);
  });

  it('a reply with nothing usable still fails after one retry: 502 and the raw memory stays', async () => {
    const t = await tenant();
    const { res, extractCalls } = await rememberWith(
      t,
      'nothing',
      'Ned sails.',
      { content: 'Sure! Ned sails.' },
      { json: { facts: [{ text: 'Ned sails.', type: 'hobby', expires_at: null }, { type: 'fact' }] } },
    );
    expect(res.status).toBe(502);
    expect(res.body.detail).toContain('every item is malformed');
    expect(extractCalls).toBe(2);
    const all = await listAll(t, 'nothing');
    expect(all).toMatchObject([{ text: 'Ned sails.', archived: false }]);
    expect(res.body.detail).toContain(all[0].id);
  });

  it('a judge reply whose every decision is malformed fails the same way', async () => {
    const t = await tenant();
    await rememberSync(t, 'judge-bad', 'Ola lives in Oslo.');
    const bad = { json: { decisions: [{ fact_index: 0, relation: 'maybe', target_id: null }] } };
    fake.script('judge_facts', bad, bad);
    const res = await rememberSync(t, 'judge-bad', 'Ola lives in Bergen.');
    expect(res.status).toBe(502);
    const all = await listAll(t, 'judge-bad');
    expect(all.find((m) => m.text === 'Ola lives in Bergen.')).toMatchObject({ archived: false, category: 'other' });
    expect((await t.api('GET', `${col('judge-bad')}/health`)).body.supersessions).toBe(0);
  });
});

import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeCall, type FakeLlm } from './fakes/openai.ts';
import { newTenant } from './support/client.ts';
import { proxyReads } from './support/proxy-reads.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The Responses proxy through the official `openai` client (configured as Codex's custom
 * provider is), against a fake upstream on 127.0.0.1 that speaks the Responses API.
 */
const REPLY = 'Ana takes oat milk.';
let fake: FakeLlm;
let server: TestServer;

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake);
  fake.on('responses', () => ({ content: REPLY, usage: { prompt_tokens: 30, completion_tokens: 5 } }));
  server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model', ORGMEM_LLM_TIMEOUT_MS: '2000' });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const { remember, jobs, storedTexts } = proxyReads(() => server);

/** Codex's custom provider: base_url http://HOST/v1/proxy/v1, wire_api "responses", the orgmem key from env_key. */
const codex = (key: string) => new OpenAI({ baseURL: `${server.url}/v1/proxy/v1`, apiKey: key, maxRetries: 0 });
async function sentDuring(fn: () => Promise<unknown>): Promise<FakeCall[]> {
  const before = fake.calls.length;
  await fn();
  return fake.calls.slice(before).filter((c) => c.name === 'responses');
}
type Developer = { role: string; content: string };

describe('Responses proxy', () => {
  it('puts the memory before the new input as a developer message, forwards the rest, and answers with memvault', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const milk = await remember(t, 'prefs', 'Ana drinks oat milk');
    let answer!: OpenAI.Responses.Response & { memvault?: { memories_used: Array<{ id: string }>; stored: boolean } };
    const [sent] = await sentDuring(async () => {
      answer = await codex(t.key).responses.create({ model: 'fake-model', instructions: 'Be brief.', input: 'What milk does Ana like?' });
    });
    expect(answer.output_text).toBe(REPLY);
    expect(answer.memvault).toMatchObject({ stored: true, memories_used: [{ id: milk }] });
    const input = sent!.body.input as Developer[];
    expect(input[0]!.role).toBe('developer');
    expect(input[0]!.content).toContain('not instructions');
    expect(input[0]!.content).toContain('Ana drinks oat milk');
    expect(input.slice(1)).toEqual([{ role: 'user', content: 'What milk does Ana like?' }]);
    expect(sent!.body.instructions).toBe('Be brief.');
    expect(await jobs(t)).toBe(1);
    // The user's words with the reply (the output_text of its message items), so that extraction sees both.
    expect(await storedTexts(t)).toEqual([`User: What milk does Ana like?\n\nAssistant: ${REPLY}`]);
    const usage = await server.app.db.query('select purpose, prompt_tokens, completion_tokens from llm_usage where tenant_id = $1 and purpose = $2', [
      t.id,
      'chat_proxy',
    ]);
    expect(usage).toEqual([{ purpose: 'chat_proxy', prompt_tokens: 30, completion_tokens: 5 }]);
  });

  it("with previous_response_id, recalls from the new items and the thread's earlier words", async () => {
    const t = await newTenant(server.url, server.adminKey);
    await remember(t, 'prefs', 'Ana drinks oat milk');
    const first = await codex(t.key).responses.create({ model: 'fake-model', input: 'What milk does Ana like?', store: false } as never);
    const [sent] = await sentDuring(() =>
      codex(t.key).responses.create({
        model: 'fake-model',
        previous_response_id: first.id,
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Is that still true?' }] }],
        store: false,
      } as never),
    );
    expect(sent!.body.previous_response_id).toBe(first.id);
    const input = sent!.body.input as Developer[];
    expect(input[0]!.role).toBe('developer');
    expect(input[0]!.content).toContain('Ana drinks oat milk');
    expect(input.slice(1)).toEqual([{ role: 'user', content: [{ type: 'input_text', text: 'Is that still true?' }] }]);
    const thread = await server.app.db.query<{ thread_id: string; said: string }>(
      'select thread_id, said from proxy_threads where tenant_id = $1 order by created_at',
      [t.id],
    );
    expect(thread).toEqual([
      { thread_id: first.id, said: 'What milk does Ana like?' },
      { thread_id: first.id, said: 'Is that still true?' },
    ]);
  });

  it('streams the semantic events as they come, without [DONE], and links the streamed response to its thread', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const stream = await codex(t.key).responses.create({ model: 'fake-model', input: 'Hello there', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...REPLY.split(' ').map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    // Stored at the stream's end, with the reply gathered from its text deltas.
    expect(await storedTexts(t)).toEqual([`User: Hello there\n\nAssistant: ${REPLY}`]);
    await until('the link', async () => {
      const rows = await server.app.db.query('select 1 from proxy_threads where tenant_id = $1 and response_id = $2', [t.id, completed.response.id]);
      return rows.length ? true : undefined;
    });

    const res = await fetch(`${server.url}/v1/proxy/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Hi', stream: true, store: false }),
    });
    const wire = await res.text();
    expect(wire).not.toContain('[DONE]');
    expect(wire.trimEnd().split('\n\n').at(-1)).toMatch(/^event: response\.completed\ndata: /);
  });

  it('a stream that breaks off ends with an error event; the user turn is stored once', async () => {
    for (const how of ['drop', 'error'] as const) {
      const t = await newTenant(server.url, server.adminKey);
      fake.script('responses', { content: REPLY, cut: { after: 2, how } });
      const events: ResponseStreamEvent[] = [];
      const failed = await (async () => {
        for await (const event of await codex(t.key).responses.create({ model: 'fake-model', input: 'Remember that Finn plays the oboe.', stream: true }))
          events.push(event);
      })().then(
        () => null,
        (err: unknown) => err as Error,
      );
      // The SDK hands the error event over (or raises it): either way the client learns why.
      const error = failed?.message ?? (events.at(-1) as { type: string; message?: string }).message;
      expect(failed ?? events.at(-1)!.type).not.toBe('response.completed');
      expect(error).toContain(how === 'error' ? 'The model crashed' : "The upstream's stream failed");
      // The user's words alone: the reply did not come whole.
      expect(await storedTexts(t)).toEqual(['Remember that Finn plays the oboe.']);
      expect(await jobs(t)).toBe(1);
    }
  });

  it('a client that leaves mid-stream aborts the upstream request; the user turn is stored once', async () => {
    const t = await newTenant(server.url, server.adminKey);
    fake.script('responses', { content: REPLY, cut: { after: 2, how: 'hold' } });
    const before = fake.abandoned;
    for await (const event of await codex(t.key).responses.create({ model: 'fake-model', input: 'Remember that Ida sails.', stream: true })) {
      if (event.type === 'response.output_text.delta') break;
    }
    await until('the upstream request aborted', async () => (fake.abandoned > before ? true : undefined), 5_000);
    expect(await storedTexts(t)).toEqual(['Remember that Ida sails.']);
    expect(await jobs(t)).toBe(1);
  });

  it('an upstream refusal is a 502 with nothing stored', async () => {
    const t = await newTenant(server.url, server.adminKey);
    fake.script('responses', { status: 500, message: 'model overloaded' });
    // The official client raises it as its own error, with OpenAI's error object.
    const err = await codex(t.key)
      .responses.create({ input: 'Remember that Finn plays the oboe.' })
      .then(
        () => expect.fail('the call succeeded'),
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.error).toEqual({ message: 'The LLM endpoint failed: 500 model overloaded', type: 'server_error', param: null, code: 'bad_gateway' });
    expect(err.status).toBe(502);
    expect(await jobs(t)).toBe(0);
  });

  it('trims long input to max_thread_tokens: instructions and leading developer messages kept, function calls dropped with their turn', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const big = (word: string) => `${word} `.repeat(400);
    const rules = { role: 'developer', content: 'House rules.' };
    const older = [
      { role: 'user', content: big('alpha') },
      { type: 'function_call', call_id: 'f1', name: 'look', arguments: '{}' },
      { type: 'function_call_output', call_id: 'f1', output: big('beta') },
      { role: 'assistant', content: big('gamma') },
    ];
    const last = { role: 'user', content: 'And now?' };
    let answer!: OpenAI.Responses.Response & { memvault: { turns_dropped: number } };
    const [sent] = await sentDuring(async () => {
      answer = (await codex(t.key).responses.create({
        model: 'fake-model',
        instructions: 'Be brief.',
        input: [rules, ...older, last],
        store: false,
        memory_limit: 0,
        max_thread_tokens: 300,
      } as never)) as typeof answer;
    });
    expect(answer.memvault.turns_dropped).toBe(1);
    expect(sent!.body.input).toEqual([rules, last]);
    expect(sent!.body.instructions).toBe('Be brief.');
  });
});

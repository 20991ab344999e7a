import { TRPCClientError } from '@trpc/client';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { tasks } from '../host/tasks.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEmbeddings, type FakeEmbeddings } from './fakes/embeddings-server.ts';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeCall, type FakeLlm } from './fakes/openai.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { trpcClient } from './support/transports.ts';
import { proxyReads } from './support/proxy-reads.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The chat proxy's `stream: true` through the official `openai` client, against a fake upstream
 * on 127.0.0.1 that streams as the real API does: chunks relayed, memory injected, the turn
 * stored once whatever happens to the stream, and nothing left running when the client leaves.
 */
const REPLY = 'Ana likes oat milk in her coffee.';
let fake: FakeLlm;
let embeddings: FakeEmbeddings;
let embeddingsFail = false;
let server: TestServer;

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake);
  fake.on('plain', () => ({ content: REPLY, usage: { prompt_tokens: 40, completion_tokens: 9 } }));
  embeddings = await startFakeEmbeddings({ fails: () => embeddingsFail });
  server = await startServer({
    ORGMEM_LLM_BASE_URL: fake.url,
    ORGMEM_LLM_MODEL: 'fake-model',
    ORGMEM_LLM_TIMEOUT_MS: '2000',
    ORGMEM_EMBEDDINGS_BASE_URL: embeddings.url,
    ORGMEM_EMBEDDINGS_MODEL: 'fake-embed',
  });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
  await embeddings?.close();
});

const { remember, jobs } = proxyReads(() => server);

const openai = (key: string) => new OpenAI({ baseURL: `${server.url}/v1/proxy`, apiKey: key, maxRetries: 0 });
const ask = (content: string) => [{ role: 'user' as const, content }];
/** The texts queued for remember (the memories the extraction jobs read). */
const queued = (t: Tenant) =>
  server.app.db
    .query<{ text: string }>(
      'select m.text from extraction_jobs j join memories m on m.tenant_id = j.tenant_id and m.id = j.memory_id where j.tenant_id = $1',
      [t.id],
    )
    .then((rows) => rows.map((r) => r.text));
/** The texts queued once the stream's end has stored the turn. */
const queuedOnce = (t: Tenant) => until('the turn stored', async () => ((await queued(t)).length ? queued(t) : undefined), 5_000);
const memories = async (t: Tenant) => (await server.app.db.query<{ n: number }>('select count(*)::int as n from memories where tenant_id = $1', [t.id]))[0]!.n;
const usage = (t: Tenant) =>
  server.app.db.query<{ purpose: string; prompt_tokens: number; completion_tokens: number }>(
    'select purpose, prompt_tokens, completion_tokens from llm_usage where tenant_id = $1 and purpose = $2',
    [t.id, 'chat_proxy'],
  );
/** The proxied calls the upstream received while `fn` ran (remember's own calls left out). */
async function upstreamCalls(fn: () => Promise<unknown>): Promise<FakeCall[]> {
  const before = fake.calls.length;
  await fn();
  return fake.calls.slice(before).filter((c) => !['extract_facts', 'judge_facts', 'check_steering'].includes(c.name));
}
async function collect(stream: AsyncIterable<ChatCompletionChunk>) {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}
const textOf = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');

describe('chat proxy, streaming', () => {
  it('relays the chunks as they come, with the memory injected, the usage chunk when asked, and memvault in headers', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const milk = await remember(t, 'prefs', 'Ana drinks oat milk');
    let chunks!: ChatCompletionChunk[];
    let headers!: Headers;
    const [sent] = await upstreamCalls(async () => {
      const { data, response } = await openai(t.key)
        .chat.completions.create({ model: 'fake-model', messages: ask('What milk does Ana like?'), stream: true, stream_options: { include_usage: true } })
        .withResponse();
      headers = response.headers;
      chunks = await collect(data);
    });
    expect(headers.get('content-type')).toContain('text/event-stream');
    expect(textOf(chunks)).toBe(REPLY);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 } });

    expect(sent!.body.stream).toBe(true);
    expect(sent!.body.messages[0]!.role).toBe('system');
    expect(sent!.body.messages[0]!.content).toContain('Ana drinks oat milk');
    expect(sent!.body.messages.slice(1)).toEqual(ask('What milk does Ana like?'));
    expect(JSON.parse(headers.get('x-memvault-memories')!)).toEqual([{ id: milk, score: expect.any(Number), collection: 'prefs' }]);
    expect(headers.get('x-memvault-stored')).toBe('true');
    expect(headers.get('x-memvault-memory-error')).toBeNull();

    // The turn is stored with the reply gathered from the deltas, so extraction sees both.
    expect(await queuedOnce(t)).toEqual([`User: What milk does Ana like?\n\nAssistant: ${REPLY}`]);
    expect(await until('the usage', async () => ((await usage(t)).length ? usage(t) : undefined))).toEqual([
      { purpose: 'chat_proxy', prompt_tokens: 40, completion_tokens: 9 },
    ]);
  });

  it('without include_usage the client gets no usage chunk, while the usage is still recorded', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const [sent] = await upstreamCalls(async () => {
      const params = { model: 'fake-model', messages: ask('Hello there'), stream: true as const, store: false };
      const chunks = await collect(await openai(t.key).chat.completions.create(params));
      expect(textOf(chunks)).toBe(REPLY);
      for (const c of chunks) {
        expect(c.choices).toHaveLength(1);
        expect(c).not.toHaveProperty('usage');
      }
    });
    // The proxy asked for the usage itself.
    expect(sent!.body.stream_options).toEqual({ include_usage: true });
    expect(await jobs(t)).toBe(0);
    expect(await until('the usage', async () => ((await usage(t)).length ? usage(t) : undefined))).toEqual([
      { purpose: 'chat_proxy', prompt_tokens: 40, completion_tokens: 9 },
    ]);
  });

  it('ends with data: [DONE] on the wire', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await fetch(`${server.url}/v1/proxy/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: ask('Hi'), stream: true, store: false }),
    });
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(
      text
        .split('\n\n')
        .filter(Boolean)
        .every((frame) => frame.startsWith('data: ')),
    ).toBe(true);
  });

  for (const how of ['drop', 'error'] as const) {
    it(`an upstream stream that breaks off (${how}) fails the client's iteration; the user turn is stored once`, async () => {
      const t = await newTenant(server.url, server.adminKey);
      fake.script('plain', { content: REPLY, cut: { after: 3, how } });
      const stream = await openai(t.key).chat.completions.create({ model: 'fake-model', messages: ask('Remember that Finn plays the oboe.'), stream: true });
      const seen: ChatCompletionChunk[] = [];
      const err = await (async () => {
        for await (const chunk of stream) seen.push(chunk);
      })().then(
        () => expect.fail('the stream ended without an error'),
        (e: unknown) => e as APIError,
      );
      expect(err).toBeInstanceOf(APIError);
      expect(err.message).toContain(how === 'error' ? 'The model crashed' : "The upstream's stream failed");
      expect(textOf(seen)).toBe('Ana likes oat ');
      // The reply never came whole: the user's words alone, once.
      expect(await queuedOnce(t)).toEqual(['Remember that Finn plays the oboe.']);
    });
  }

  it('a client that leaves mid-stream aborts the upstream request; the user turn is stored once', async () => {
    const t = await newTenant(server.url, server.adminKey);
    fake.script('plain', { content: REPLY, cut: { after: 2, how: 'hold' } });
    const before = fake.abandoned;
    const stream = await openai(t.key).chat.completions.create({ model: 'fake-model', messages: ask('Remember that Gus keeps bees.'), stream: true });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) break; // leaving the loop aborts the request
    }
    await until('the upstream request aborted', async () => (fake.abandoned > before ? true : undefined), 5_000);
    expect(await queuedOnce(t)).toEqual(['Remember that Gus keeps bees.']);
    // The usage of what was streamed is still written down.
    await until('the usage', async () => ((await usage(t)).length ? true : undefined), 5_000);
  });

  it('an upstream that refuses the request is a 502 before any event, with nothing stored', async () => {
    const t = await newTenant(server.url, server.adminKey);
    fake.script('plain', { status: 500, message: 'model overloaded' });
    const res = await call(server.url, 'POST', '/v1/proxy/chat/completions', { key: t.key, body: { messages: ask('Hello'), stream: true } });
    expect(res.status).toBe(502);
    expect(res.body.error.message).toContain('The LLM endpoint failed: 500 model overloaded');
    expect(await jobs(t)).toBe(0);
  });

  it('over tRPC, stream: true is a 400 before anything is stored or sent upstream', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const trpc = trpcClient(server.url, t.key);
    const calls = await upstreamCalls(async () => {
      const err = await trpc.proxy.chatCompletions.mutate({ messages: ask('Remember that Ivo sails.'), stream: true }).then(
        () => expect.fail('tRPC streamed'),
        (e: unknown) => e as TRPCClientError<never>,
      );
      expect(err).toBeInstanceOf(TRPCClientError);
      expect(err.data).toMatchObject({ httpStatus: 400, detail: expect.stringContaining('use POST /v1/proxy/chat/completions') });
      // The other proxies' streams are refused the same way.
      for (const send of [
        () => trpc.proxy.messages.mutate({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], stream: true }),
        () => trpc.proxy.responses.mutate({ input: 'Hi', stream: true }),
      ]) {
        expect(
          await send().then(
            () => 'ok',
            (e: TRPCClientError<never>) => (e.data as unknown as { httpStatus: number }).httpStatus,
          ),
        ).toBe(400);
      }
    });
    expect(calls).toEqual([]);
    expect(await jobs(t)).toBe(0);
    expect(await memories(t)).toBe(0);
    // Whole, the same call works over tRPC.
    const whole = await trpc.proxy.chatCompletions.mutate({ messages: ask('Hello'), store: false });
    expect(whole.choices[0]!.message.content).toBe(REPLY);
  });

  it('a memory outage does not break the chat: it goes on without storing and says so', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await remember(t, 'prefs', 'Ana drinks oat milk');
    embeddingsFail = true;
    try {
      let headers!: Headers;
      const [sent] = await upstreamCalls(async () => {
        const { data, response } = await openai(t.key)
          .chat.completions.create({ model: 'fake-model', messages: ask('What milk does Ana like?'), stream: true })
          .withResponse();
        headers = response.headers;
        expect(textOf(await collect(data))).toBe(REPLY);
      });
      // Search falls back on its keyword half without embeddings; storing needs them.
      expect(sent!.body.messages.at(-1)).toEqual(ask('What milk does Ana like?')[0]);
      // A stream stores its turn at its end, after the headers: they say it is to be stored.
      expect(headers.get('x-memvault-stored')).toBe('true');
      // The usage is recorded after the store was tried: by then the failed store has left nothing.
      await until('the usage', async () => ((await usage(t)).length ? true : undefined), 5_000);
      expect(await jobs(t)).toBe(0);
      // The tenant sees it where its other failed background work is counted: pipeline health.
      expect((await t.api('GET', '/v1/memory/collections/default/health')).body.jobs).toMatchObject({ failed_proxy_stores: 1 });
      expect((await t.api('GET', '/v1/memory/admin/stats')).body.jobs).toMatchObject({ failed_proxy_stores: 1 });
      expect((await t.api('GET', '/v1/memory/collections/prefs/health')).body.jobs).toMatchObject({ failed_proxy_stores: 0 });

      const whole = await call(server.url, 'POST', '/v1/proxy/chat/completions', { key: t.key, body: { messages: ask('What milk does Ana like?') } });
      expect(whole.status).toBe(200);
      expect(whole.body.memvault).toMatchObject({ stored: false, memory_error: expect.stringContaining('storing the message failed') });
      expect(await jobs(t)).toBe(0);
      expect((await t.api('GET', '/v1/memory/admin/stats')).body.jobs).toMatchObject({ failed_proxy_stores: 2 });
      // Kept a week, then dropped by the writes sweep.
      await server.app.db.query(`update proxy_store_failures set created_at = now() - interval '8 days' where tenant_id = $1`, [t.id]);
      await tasks.find((task) => task.name === 'writes_sweep')!.run(server.app, {}, { attempt: 1, maxAttempts: 1 });
      expect((await t.api('GET', '/v1/memory/admin/stats')).body.jobs).toMatchObject({ failed_proxy_stores: 0 });
    } finally {
      embeddingsFail = false;
    }
  });
});

import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type AnthropicCall, type Block, type FakeAnthropic } from './fakes/anthropic.ts';
import { call, newTenant } from './support/client.ts';
import { proxyReads } from './support/proxy-reads.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The Messages proxy through the official `@anthropic-ai/sdk` client (configured the way Claude
 * Code is: ANTHROPIC_BASE_URL and an orgmem key), against a fake Anthropic API on 127.0.0.1.
 */
const UPSTREAM_KEY = 'sk-ant-upstream';
const REPLY = 'Ana takes oat milk.';
let fake: FakeAnthropic;
let server: TestServer;
let nextReply: (call: AnthropicCall) => Block[] = () => [{ type: 'text', text: REPLY }];

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: UPSTREAM_KEY, reply: (c) => ({ content: nextReply(c) }) });
  server = await startServer({ ORGMEM_ANTHROPIC_BASE_URL: fake.url, ORGMEM_ANTHROPIC_API_KEY: UPSTREAM_KEY, ORGMEM_LLM_TIMEOUT_MS: '2000' });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const { remember, jobs, storedTexts } = proxyReads(() => server);

/** The client as Claude Code configures it: ANTHROPIC_BASE_URL is the proxy, the key an orgmem key (x-api-key). */
const claude = (key: string, how: 'apiKey' | 'authToken' = 'apiKey') =>
  new Anthropic({ baseURL: `${server.url}/v1/proxy`, [how]: key, maxRetries: 0 } as ConstructorParameters<typeof Anthropic>[0]);
const MODEL = 'claude-fake-model';
async function sentDuring(fn: () => Promise<unknown>): Promise<AnthropicCall[]> {
  const before = fake.calls.length;
  await fn();
  return fake.calls.slice(before);
}
const recalledIn = (block: { type: string; text?: string }) => block.type === 'text' && /<recalled_memories>/.test(block.text ?? '');

/** A Claude Code-like turn: cached system blocks, a tool, an image and a document, earlier thinking with its signature. */
const conversation = (question: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model: MODEL,
  max_tokens: 1024,
  system: [
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
    { type: 'text', text: 'Project notes.', cache_control: { type: 'ephemeral' } },
  ],
  tools: [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A plan.' } },
        { type: 'text', text: 'Look at these.' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user shared files.', signature: 'sig-abc==' },
        { type: 'text', text: 'Seen.' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>Today is Monday.</system-reminder>' },
        { type: 'text', text: question, cache_control: { type: 'ephemeral' } },
      ],
    },
  ],
});

describe('Messages proxy', () => {
  it('appends the memory after the last breakpoint and forwards everything else verbatim; the answer comes back with memvault', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const milk = await remember(t, 'prefs', 'Ana drinks oat milk');
    const params = conversation('What milk does Ana like?');
    let answer!: Anthropic.Message & { memvault?: { memories_used: Array<{ id: string }>; stored: boolean } };
    const [sent] = await sentDuring(async () => (answer = await claude(t.key).messages.create(params)));

    expect(answer.content).toEqual([{ type: 'text', text: REPLY }]);
    expect(answer.memvault).toMatchObject({ stored: true, memories_used: [{ id: milk }] });
    expect(sent!.headers['x-api-key']).toBe(UPSTREAM_KEY);
    // The client's own anthropic-version, sent on.
    expect(sent!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // Everything but the last user message as sent; that one gains one block at its end.
    const { messages, ...rest } = sent!.body;
    expect(rest).toEqual({ model: MODEL, max_tokens: 1024, system: params.system, tools: params.tools });
    expect(messages.slice(0, -1)).toEqual(params.messages.slice(0, -1));
    const last = messages.at(-1)!.content as Array<{ type: string; text?: string }>;
    expect(last.slice(0, -1)).toEqual(params.messages.at(-1)!.content);
    expect(recalledIn(last.at(-1)!)).toBe(true);
    expect(last.at(-1)!.text).toContain('not instructions');
    expect(last.at(-1)!.text).toContain('Ana drinks oat milk');
    expect(last.at(-1)).not.toHaveProperty('cache_control');

    // The words of the user were stored with the reply, not the reminder.
    expect(await jobs(t)).toBe(1);
    const [raw] = await server.app.db.query<{ text: string }>("select text from memories where tenant_id = $1 and collection = 'default'", [t.id]);
    expect(raw!.text).toBe(`User: What milk does Ana like?\n\nAssistant: ${REPLY}`);
    const usage = await server.app.db.query('select purpose, source, model from llm_usage where tenant_id = $1', [t.id]);
    expect(usage).toEqual([{ purpose: 'chat_proxy', source: 'server', model: MODEL }]);
  });

  it('streams the exact event sequence of the upstream, thinking and tool use included', async () => {
    const t = await newTenant(server.url, server.adminKey);
    nextReply = () => [
      { type: 'thinking', thinking: 'Reading the file helps.', signature: 'sig-xyz==' },
      { type: 'text', text: 'Let me read it.' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } },
    ];
    try {
      const stream = claude(t.key).messages.stream({ ...conversation('Open a.txt please'), stream: undefined } as Anthropic.MessageStreamParams);
      const types: string[] = [];
      stream.on('streamEvent', (e) => types.push(e.type));
      const final = await stream.finalMessage();
      expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
      expect(final.content[0]).toMatchObject({ thinking: 'Reading the file helps.', signature: 'sig-xyz==' });
      expect(final.content[1]).toMatchObject({ text: 'Let me read it.' });
      expect(final.content[2]).toMatchObject({ id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } });
      expect(final.stop_reason).toBe('tool_use');
      expect(types[0]).toBe('message_start');
      expect(types.at(-1)).toBe('message_stop');
      // Stored at the stream's end with the reply gathered from its text deltas: not its thinking, not its tool call.
      expect(await storedTexts(t)).toEqual(['User: Open a.txt please\n\nAssistant: Let me read it.']);

      // On the wire: the very events the upstream sent, in order, names and data alike.
      const res = await fetch(`${server.url}/v1/proxy/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': t.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ ...conversation('Open a.txt please'), stream: true, store: false }),
      });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      expect(fake.calls.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
      const names = [...(await res.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
      expect(names).toEqual([
        'message_start',
        'ping',
        ...['content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop'],
        ...['content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop'],
        ...['content_block_start', 'content_block_delta', 'content_block_stop'],
        'message_delta',
        'message_stop',
      ]);
    } finally {
      nextReply = () => [{ type: 'text', text: REPLY }];
    }
  });

  it('takes the key as a bearer token too, and refuses a wrong key with a 401', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const answer = await claude(t.key, 'authToken').messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    expect(answer.content).toEqual([{ type: 'text', text: REPLY }]);
    const err = await claude('om_wrong')
      .messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('passes side queries and compaction requests through untouched, storing nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await remember(t, 'prefs', 'Ana drinks oat milk');
    const title = {
      model: 'claude-fake-small',
      max_tokens: 512,
      system: [{ type: 'text' as const, text: "You are Claude Code, Anthropic's official CLI for Claude. Write a title for this chat." }],
      messages: [{ role: 'user' as const, content: 'What milk does Ana like?' }],
    };
    const compaction = conversation('Your task is to create a detailed summary of the conversation so far, paying attention to milk.');
    const probe = { model: 'claude-fake-small', max_tokens: 1, messages: [{ role: 'user' as const, content: 'quota' }] };
    const sent = await sentDuring(async () => {
      for (const params of [title, compaction, probe]) await claude(t.key).messages.create(params);
    });
    expect(sent.map((c) => c.body)).toEqual([title, compaction, probe]);
    expect(await jobs(t)).toBe(0);
  });

  it('a tool loop stores the user turn once', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const first = conversation('Remember that Finn plays the oboe.');
    await claude(t.key).messages.create(first);
    const withResult = {
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_9', name: 'read_file', input: { path: 'x' } }] },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_9', content: 'file text' }] },
      ],
    };
    const [sent] = await sentDuring(() => claude(t.key).messages.create(withResult));
    expect(await jobs(t)).toBe(1);
    // Recall still searched with the latest words of the user; the tool result stays first in its message.
    expect((sent!.body.messages.at(-1)!.content as Array<{ type: string }>)[0]!.type).toBe('tool_result');
  });

  it('a stream that breaks off ends with an error event the SDK raises; the user turn is stored once', async () => {
    for (const how of ['drop', 'error'] as const) {
      const t = await newTenant(server.url, server.adminKey);
      fake.script({ content: [{ type: 'text', text: REPLY }], cut: { after: 2, how } });
      const stream = claude(t.key).messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Remember that Gus keeps bees.' }] });
      const err = await stream.finalMessage().then(
        () => expect.fail('the stream ended without an error'),
        (e: unknown) => e as Error,
      );
      // Anthropic's error event, the upstream's own or ours: the SDK's APIError with its type.
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe(how === 'error' ? 'overloaded_error' : 'api_error');
      expect(err.message).toContain(how === 'error' ? 'Overloaded' : "The upstream's stream failed");
      // The user's words alone: the reply did not come whole.
      expect(await storedTexts(t)).toEqual(['Remember that Gus keeps bees.']);
      expect(await jobs(t)).toBe(1);
    }
  });

  it('a client that leaves mid-stream aborts the upstream request; the user turn is stored once', async () => {
    const t = await newTenant(server.url, server.adminKey);
    fake.script({ content: [{ type: 'text', text: REPLY }], cut: { after: 2, how: 'hold' } });
    const before = fake.abandoned;
    const stream = await claude(t.key).messages.create({
      model: MODEL,
      max_tokens: 100,
      stream: true,
      messages: [{ role: 'user', content: 'Remember that Ida sails.' }],
    });
    for await (const event of stream) if (event.type === 'content_block_delta') break;
    await until('the upstream request aborted', async () => (fake.abandoned > before ? true : undefined), 5_000);
    expect(await storedTexts(t)).toEqual(['Remember that Ida sails.']);
    expect(await jobs(t)).toBe(1);
  });

  it('passes count_tokens through, and maps upstream failures to 502 with nothing stored', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const params = { model: MODEL, messages: [{ role: 'user' as const, content: 'Count me' }] };
    const [sent] = await sentDuring(async () => expect((await claude(t.key).messages.countTokens(params)).input_tokens).toBeGreaterThan(0));
    expect(sent!.path).toBe('/v1/messages/count_tokens');
    expect(sent!.body).toEqual(params);

    fake.script({ status: 529, message: 'Overloaded' });
    const res = await call(server.url, 'POST', '/v1/proxy/v1/messages', {
      key: t.key,
      body: { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      detail: 'The Anthropic upstream failed: 529 Overloaded',
      type: 'error',
      error: { type: 'api_error', message: 'The Anthropic upstream failed: 529 Overloaded' },
    });
    expect(await jobs(t)).toBe(0);
  });

  it("answers every error in Anthropic's envelope, which the SDK raises as its typed errors", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const hi = { model: MODEL, max_tokens: 10, messages: [{ role: 'user' as const, content: 'Hi' }] };
    /** The call's failure: the SDK's error class, status, Anthropic's error type and message. */
    const refused = async (
      client: Anthropic,
      [kind, status, type, message]: [new (...args: never[]) => object, number, string, RegExp],
      params: Anthropic.MessageCreateParamsNonStreaming = hi,
    ) => {
      const err = await client.messages.create(params).then(
        () => expect.fail('the call succeeded'),
        (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
      );
      expect(err).toBeInstanceOf(kind);
      expect({ status: err.status, type: err.type }).toEqual({ status, type });
      expect(err.apiMessage).toMatch(message);
    };

    // The upstream's failures, a server error and a rate limit alike: the gateway's 502.
    for (const [status, message] of [
      [500, 'Internal server error'],
      [429, 'Number of request tokens has exceeded your per-minute rate limit'],
    ] as const) {
      fake.script({ status, message });
      await refused(claude(t.key), [Anthropic.InternalServerError, 502, 'api_error', new RegExp(`^The Anthropic upstream failed: ${status} ${message}$`)]);
    }
    // Our own refusals: a request that is not valid, a wrong key, a key that may not write, the spend cap.
    await refused(claude(t.key), [Anthropic.UnprocessableEntityError, 422, 'invalid_request_error', /^Invalid request: max_tokens: /], {
      ...hi,
      max_tokens: 0,
    });
    await refused(claude('mv_wrong'), [Anthropic.AuthenticationError, 401, 'authentication_error', /API key/]);
    const readOnly = await t.newKey('reader', true);
    await refused(claude(readOnly.key), [Anthropic.PermissionDeniedError, 403, 'permission_error', /read-only/]);
    const capped = await newTenant(server.url, server.adminKey);
    expect((await capped.api('PUT', '/v1/memory/spend-cap', { monthly_usd: 0 })).status).toBe(200);
    await refused(claude(capped.key), [Anthropic.RateLimitError, 429, 'rate_limit_error', /spend cap/]);
    // A body the server refuses before the route reads it.
    const over = await call(server.url, 'POST', '/v1/proxy/v1/messages', { key: t.key, rawBody: `{"x": "${'x'.repeat(33 * 1024 * 1024)}"}` });
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: over.body.detail } });
    expect(await jobs(t)).toBe(0);
  });

  it('works the way Claude Code is configured: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const saved = { base: process.env.ANTHROPIC_BASE_URL, key: process.env.ANTHROPIC_API_KEY };
    process.env.ANTHROPIC_BASE_URL = `${server.url}/v1/proxy`;
    process.env.ANTHROPIC_API_KEY = t.key;
    try {
      const answer = await new Anthropic({ maxRetries: 0 }).messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] });
      expect(answer.content).toEqual([{ type: 'text', text: REPLY }]);
    } finally {
      for (const [name, value] of [
        ['ANTHROPIC_BASE_URL', saved.base],
        ['ANTHROPIC_API_KEY', saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('proxy request bodies', () => {
  it('accepts a whole history of tens of MB up to 32 MB, and answers 413 above', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const history = (bytes: number) => ({
      model: MODEL,
      max_tokens: 100,
      store: false,
      messages: [
        { role: 'user', content: 'x'.repeat(bytes) },
        { role: 'assistant', content: 'Noted.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    const big = await call(server.url, 'POST', '/v1/proxy/v1/messages', { key: t.key, body: history(20 * 1024 * 1024) });
    expect(big.status).toBe(200);
    expect(fake.calls.at(-1)!.body.messages[0]!.content).toHaveLength(20 * 1024 * 1024);
    const over = await call(server.url, 'POST', '/v1/proxy/v1/messages', { key: t.key, body: history(33 * 1024 * 1024) });
    expect(over.status).toBe(413);
    expect(over.body.detail).toContain(String(32 * 1024 * 1024));
  });

  it("trims a long thread to max_thread_tokens, keeping system, tool results with their calls, and every turn from the client's first breakpoint on", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const big = (word: string) => `${word} `.repeat(400);
    const older: Anthropic.MessageParam[] = [
      { role: 'user', content: big('alpha') },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: big('beta') }] },
      { role: 'assistant', content: 'Read.' },
    ];
    const cached: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: big('gamma'), cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: 'Fine.' },
    ];
    const base = { model: MODEL, max_tokens: 256, system: 'Be brief.', memory_limit: 0, store: false };
    const last: Anthropic.MessageParam = { role: 'user', content: 'And now?' };
    let answer!: Anthropic.Message & { memvault: { turns_dropped: number } };
    let [sent] = await sentDuring(async () => {
      answer = (await claude(t.key).messages.create({ ...base, messages: [...older, ...cached, last], max_thread_tokens: 300 } as never)) as typeof answer;
    });
    // The first turn (a tool call and its result) goes whole; trimming stops at the breakpoint's turn.
    expect(answer.memvault.turns_dropped).toBe(1);
    expect(sent!.body.messages).toEqual([...cached, last]);
    expect(sent!.body.system).toBe('Be brief.');
    expect(sent!.body).not.toHaveProperty('max_thread_tokens');

    // Streamed, the count is in the headers.
    const { response } = await claude(t.key)
      .messages.create({ ...base, messages: [...older, ...cached, last], max_thread_tokens: 300, stream: true } as never)
      .withResponse();
    expect(response.headers.get('x-memvault-turns-dropped')).toBe('1');
    await response.text();

    [sent] = await sentDuring(async () => {
      answer = (await claude(t.key).messages.create({ ...base, messages: [...older, ...cached, last] } as never)) as typeof answer;
    });
    expect(answer.memvault.turns_dropped).toBe(0);
    expect(sent!.body.messages).toEqual([...older, ...cached, last]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIRMATION_STEP } from '../src/services/graph/remember.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { col, pollJob, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

// What remember keeps of a conversation (docs/graph.md, "What remember keeps"), on the offline
// default and with an LLM whose facts go through the same filter.

let bare: TestServer;
beforeAll(async () => {
  bare = await startServer();
});
afterAll(() => bare?.close());

const current = async (t: Tenant, c: string) => ((await t.api('GET', `${col(c)}/memories?limit=200`)).body as any[]).map((m) => m.text as string);
const everything = async (t: Tenant, c: string) =>
  ((await t.api('GET', `${col(c)}/memories?limit=200&include_archived=true`)).body as any[]).map((m) => m.text as string);

describe('remember without any LLM keeps knowledge, not chatter', () => {
  it('a Stop-hook turn stores no chatter and no speaker prefixes', async () => {
    const t = await newTenant(bare.url, bare.adminKey);
    const turn =
      'User: Read the Makefile first. We always run make lint before committing.\n\n' +
      "Assistant: Let me check the Makefile. I'll follow those rules. The lint target runs golangci-lint over every package.";
    const res = await call(bare.url, 'POST', `${col('hook')}/remember`, { key: t.key, body: { content: turn }, headers: { 'idempotency-key': 'hook:s1:0' } });
    const { job } = await pollJob(t, res.body.job_id);
    expect(job.facts.map((f: any) => f.text)).toEqual([
      'The team always runs make lint before committing.',
      'The lint target runs golangci-lint over every package.',
    ]);
    const stored = await current(t, 'hook');
    expect(stored.sort()).toEqual(['The lint target runs golangci-lint over every package.', 'The team always runs make lint before committing.']);
    for (const text of stored) expect(text).not.toMatch(/User:|Assistant:|Let me|I'll follow/);
  });

  const junk: Array<[string, string]> = [
    ['acknowledgements', 'User: Thanks! Sounds good.\n\nAssistant: Done. Glad it works.'],
    [
      'procedural chatter and requests',
      "User: Fix the failing test.\n\nAssistant: Let me look at the logs. Running the tests now. I'll follow those rules. Next, I'll update the config.",
    ],
    ['questions without an answer', 'User: Do we still need the v1 export endpoint? who uses it\n\nAssistant: Should I grep the access logs?'],
    ['a code listing', "Assistant: Here's the helper:\n\n```ts\nexport function add(a: number, b: number) {\n  return a + b;\n}\n```"],
    ['shell commands alone', 'User: $ npm run build\nnpm test -- --watch\ngit push origin main'],
    [
      'a stack trace',
      "User: TypeError: Cannot read properties of null (reading 'email')\n    at formatOrder (/app/src/orders/format.ts:42:27)\n    at async handler (/app/src/routes/orders.ts:9:5)",
    ],
    ['log lines', 'User: 2025-11-02T08:14:03Z INFO worker started pid=7\n[ERROR] connection refused to redis:6379\nnpm ERR! code ELIFECYCLE'],
    ['a file listing', 'Assistant: src/load.ts\ndocs/setup.md\n├── package.json\n└── tsconfig.json'],
    ['a diff', "Assistant: diff --git a/src/load.ts b/src/load.ts\n@@ -3,3 +3,3 @@\n-const FILE = 'config.yml';\n+const FILE = 'settings.yml';"],
    ['thinking', 'Assistant: <thinking>The user probably runs this on CI, which uses a UTC clock.</thinking>'],
    ['tool output', 'Tool: Test Files  42 passed (42)\nThe suite runs in 21 seconds on the CI runner.'],
  ];
  it.each(junk)('drops %s: no fact, and the raw text archived out of search', async (_name, content) => {
    const t = await newTenant(bare.url, bare.adminKey);
    const res = await rememberSync(t, 'junk', content);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 0, memories: [] });
    expect(await current(t, 'junk')).toEqual([]);
    expect(await everything(t, 'junk')).toHaveLength(1);
  });

  it("keeps decisions, rules and conclusions, naming the holder of a user's first-person words", async () => {
    const t = await newTenant(bare.url, bare.adminKey);
    const res = await rememberSync(
      t,
      'kept',
      'User: I prefer tabs over spaces. We always squash-merge pull requests. Never push to main.\n\n' +
        "Assistant: It turns out the flaky test was caused by the timezone. I'll fix it now.",
    );
    expect(res.body.memories.map((m: any) => [m.text, m.type])).toEqual([
      ['The user prefers tabs over spaces.', 'preference'],
      ['The team always squash-merges pull requests.', 'fact'],
      ["The user's rule: never push to main.", 'fact'],
      ['The flaky test was caused by the timezone.', 'fact'],
    ]);
  });

  it('never stores the text of a <private> block, closed or not, raw memory included', async () => {
    const t = await newTenant(bare.url, bare.adminKey);
    await rememberSync(t, 'p', 'The office wifi is called guest-net. <private>The wifi password is hunter2.</private> The printer is on floor 3.');
    const queued = await t.api('POST', `${col('p')}/remember`, {
      content: 'User: The VPN gateway is vpn.acme.example. <private>token ghp_s3cr3t and the rest',
    });
    await pollJob(t, queued.body.job_id);
    const all = await everything(t, 'p');
    expect(all.join('\n')).not.toMatch(/hunter2|ghp_s3cr3t|password/);
    expect(await current(t, 'p')).toEqual(
      expect.arrayContaining(['The office wifi is called guest-net.', 'The printer is on floor 3.', 'The VPN gateway is vpn.acme.example.']),
    );
  });

  it('a repeated fact confirms the memory that says it: counted, importance raised (pinned too, up to 1), never stored twice', async () => {
    const t = await newTenant(bare.url, bare.adminKey);
    const fact = 'The deploy pipeline runs on Buildkite.';
    const first = await rememberSync(t, 'rep', fact, 0.5);
    const id = first.body.memories[0].id;
    const use = async () =>
      (
        await bare.app.db.query<{ confirmations: number; last_confirmed_at: Date | null }>(
          'select confirmations, last_confirmed_at from memory_use where tenant_id = $1 and memory_id = $2',
          [t.id, id],
        )
      )[0];
    expect(await use()).toBeUndefined();
    for (const content of [fact, `User: ${fact}`]) {
      const again = await rememberSync(t, 'rep', content, 0.5);
      expect(again.body).toMatchObject({ created: 0, memories: [{ id, relation: 'duplicate' }] });
    }
    expect(await use()).toMatchObject({ confirmations: 2, last_confirmed_at: expect.any(Date) });
    expect(await current(t, 'rep')).toEqual([fact]);
    const read = async () => (await t.api('GET', `${col('rep')}/memories/${id}`)).body;
    expect((await read()).importance).toBeCloseTo(0.5 + 2 * CONFIRMATION_STEP);

    // Pinned, and near the cap: raised to 1, then kept there while the count goes on.
    expect((await t.api('POST', `${col('rep')}/memories/${id}/pin`, { pinned: true })).status).toBe(200);
    expect((await t.api('PATCH', `${col('rep')}/memories/${id}`, { importance: 0.98 })).status).toBe(200);
    await rememberSync(t, 'rep', fact);
    expect(await read()).toMatchObject({ importance: 1, pinned: true });
    await rememberSync(t, 'rep', fact);
    expect((await read()).importance).toBe(1);
    expect((await use())!.confirmations).toBe(4);
  });
});

describe('with an LLM, its facts pass the same filter', () => {
  let fake: FakeLlm;
  let server: TestServer;
  const logLines: string[] = [];
  beforeAll(async () => {
    fake = await startFakeLlm();
    server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' }, { logLines });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('drops a junk fact of the reply and logs it at warn; asks for durable knowledge only', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const fact = (text: string) => ({ text, type: 'fact', valid_from: null, expires_at: null, time_phrase: null });
    fake.script('extract_facts', {
      json: { facts: [fact('Let me check the Makefile.'), fact('User: I prefer tabs.'), fact('The team squash-merges pull requests.')] },
    });
    const res = await rememberSync(t, 'llm', 'User: We squash-merge pull requests.\n\nAssistant: Let me check the Makefile.');
    expect(res.body.memories.map((m: any) => m.text)).toEqual(['The team squash-merges pull requests.']);
    const warned = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'LLM fact is not knowledge; dropped');
    expect(warned.map((l) => [l.level, l.fact])).toEqual([
      [40, 'Let me check the Makefile.'],
      [40, 'User: I prefer tabs.'],
    ]);
    const system = fake.callsNamed('extract_facts').at(-1)!.body.messages[0]!.content as string;
    expect(system).toMatch(/durable knowledge/);
    expect(system).toMatch(/never use the first person/i);
  });
});

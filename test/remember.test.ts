import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../trpc/router.ts';
import { crontab, tasks } from '../host/tasks.ts';
import { extractionJob } from '../src/services/graph/extraction-jobs.ts';
import { extractBySentence, playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { col, mcpClient, pollJob, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

let fake: FakeLlm;
let server: TestServer;
const tenant = () => newTenant(server.url, server.adminKey);
const MAX_RETRIES = 1;

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake, [['Ana lives in Porto.', 'Ana lives in Lisbon.']]);
  // Content marked BROKEN always meets a failing endpoint.
  fake.on('extract_facts', (call) => (call.user.includes('BROKEN') ? { status: 500, message: 'model overloaded' } : extractBySentence(call)));
  server = await startServer({
    ORGMEM_LLM_BASE_URL: fake.url,
    ORGMEM_LLM_MODEL: 'fake-model',
    ORGMEM_LLM_MAX_RETRIES: String(MAX_RETRIES),
  });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const listAll = async (t: Tenant, c: string) => (await t.api('GET', `${col(c)}/memories?include_archived=true&limit=200`)).body as any[];

describe('remember (server LLM override)', () => {
  it('extracts typed facts, stores each as its own memory and archives the raw text', async () => {
    const t = await tenant();
    const res = await rememberSync(t, 'ana', 'Ana lives in Lisbon. Ana likes green tea. Yesterday Ana ran a marathon.', 0.8);
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(3);
    expect(res.body.skipped).toBeNull();
    expect(res.body.memories.map((m: any) => [m.text, m.type, m.relation])).toEqual([
      ['Ana lives in Lisbon.', 'fact', 'new'],
      ['Ana likes green tea.', 'preference', 'new'],
      ['Yesterday Ana ran a marathon.', 'episode', 'new'],
    ]);
    const all = await listAll(t, 'ana');
    const raw = all.find((m) => m.text.startsWith('Ana lives in Lisbon. Ana likes'));
    expect(raw).toMatchObject({ archived: true, source: 'remember', category: 'other' });
    const facts = all.filter((m) => m.id !== raw.id);
    expect(facts.map((m) => m.category).sort()).toEqual(['episode', 'fact', 'preference']);
    for (const f of facts) expect(f).toMatchObject({ source: 'remember', importance: 0.8, archived: false, metadata: { remembered_from: raw.id } });
    // Only the facts are listed by default.
    expect((await t.api('GET', `${col('ana')}/memories`)).body).toHaveLength(3);

    const call = fake.callsNamed('extract_facts').find((c) => c.user.startsWith('Ana lives in Lisbon. Ana likes'))!;
    expect(call.body.model).toBe('fake-model');
    expect(call.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'extract_facts', strict: true } });
    expect(call.body.response_format!.json_schema.schema).toMatchObject({ type: 'object', required: ['facts'], additionalProperties: false });
  });

  it('supersedes a contradicted fact and stores a duplicate only once', async () => {
    const t = await tenant();
    const first = await rememberSync(t, 'c', 'Ana lives in Lisbon.');
    const lisbon = first.body.memories[0].id;
    const moved = await rememberSync(t, 'c', 'Ana lives in Porto.');
    expect(moved.body).toMatchObject({ created: 1, memories: [{ text: 'Ana lives in Porto.', relation: 'supersedes', supersedes_id: lisbon }] });
    const again = await rememberSync(t, 'c', 'Ana lives in Porto.');
    expect(again.body).toMatchObject({ created: 0, memories: [{ relation: 'duplicate', id: moved.body.memories[0].id }] });
    expect((await t.api('GET', `${col('c')}/memories`)).body.map((m: any) => m.text)).toEqual(['Ana lives in Porto.', 'Ana lives in Lisbon.']);
    const pairs = await t.api('GET', `${col('c')}/contradictions`);
    expect(pairs.body).toHaveLength(1);
    expect(pairs.body[0].current.id).toBe(moved.body.memories[0].id);
    expect(pairs.body[0].superseded.id).toBe(lisbon);
    expect(typeof pairs.body[0].superseded_at).toBe('string');
  });

  it('runs as a job: queued -> processing -> done', async () => {
    const t = await tenant();
    fake.script('extract_facts', { json: { facts: [{ text: 'Ben owns a red bike.', type: 'fact', expires_at: null }] }, delayMs: 1_200 });
    const res = await t.api('POST', `${col('jobs')}/remember`, { content: 'Ben owns a red bike.' });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(['job_id', 'state']);
    expect(res.body.state).toBe('queued');
    const { states, job } = await pollJob(t, res.body.job_id);
    expect(states.at(-1)).toBe('done');
    expect(states).toContain('processing');
    const order = ['queued', 'processing', 'done'];
    expect(states.map((s) => order.indexOf(s))).toEqual([...states.map((s) => order.indexOf(s))].sort());
    expect(job).toMatchObject({ complete: true, error: null, skipped: null, attempts: 1, collection: 'jobs' });
    expect(job.facts).toEqual([{ id: expect.any(String), text: 'Ben owns a red bike.', type: 'fact', relation: 'new', expires_at: null }]);
    const fact = await t.api('GET', `${col('jobs')}/memories/${job.facts[0].id}`);
    expect(fact.body.category).toBe('fact');
    // The job writes as the agent that called remember.
    const [key] = (await t.api('GET', '/v1/memory/keys')).body;
    expect(fact.body.created_by).toEqual({ id: key.id, label: key.label });
  });

  it('fails after 3 tries, keeping the raw memory', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const res = await t.api('POST', `${col('broken')}/remember`, { content: 'BROKEN: Cleo plays the cello.' });
    expect(res.status).toBe(202);
    const { job } = await pollJob(t, res.body.job_id);
    expect(job).toMatchObject({ state: 'failed', complete: true, attempts: 3, facts: [] });
    expect(job.error).toContain('500 model overloaded');
    // 3 tries, each with the client's own retries.
    expect(fake.calls.filter((c) => c.user.includes('BROKEN'))).toHaveLength(3 * (1 + MAX_RETRIES));
    const all = await listAll(t, 'broken');
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: job.memory_id, text: 'BROKEN: Cleo plays the cello.', archived: false });
  });

  it('asks again once when the reply is not valid JSON of the schema', async () => {
    const t = await tenant();
    const before = fake.callsNamed('extract_facts').length;
    fake.script('extract_facts', { content: 'Sure! Here are the facts: Dara is a pilot.' });
    fake.script('extract_facts', { json: { facts: [{ text: 'Dara is a pilot.', type: 'fact', expires_at: null }] } });
    const res = await rememberSync(t, 'retry', 'Dara is a pilot.');
    expect(res.status).toBe(200);
    expect(res.body.memories).toMatchObject([{ text: 'Dara is a pilot.', relation: 'new' }]);
    expect(fake.callsNamed('extract_facts').length - before).toBe(2);
  });

  it('a second invalid reply fails cleanly: 502 on sync, the raw memory stays and nothing else is written', async () => {
    const t = await tenant();
    fake.script('extract_facts', { json: { facts: [{ text: 'x', type: 'opinion', expires_at: null }] } });
    fake.script('extract_facts', { json: { facts: [{ type: 'fact', expires_at: null }] } });
    const res = await rememberSync(t, 'invalid', 'Eli is tall.');
    expect(res.status).toBe(502);
    const all = await listAll(t, 'invalid');
    expect(all).toHaveLength(1);
    expect(res.body.detail).toContain(all[0].id);
    expect(res.body.detail).toContain('invalid twice');
    expect(all[0].archived).toBe(false);
  });

  it('a judge reply naming a fact it was not shown is rejected and asked again', async () => {
    const t = await tenant();
    await rememberSync(t, 'judge', 'Fay lives in Oslo.');
    const before = fake.callsNamed('judge_facts').length;
    fake.script('judge_facts', { json: { decisions: [{ fact_index: 0, relation: 'supersedes', target_id: '01900000-0000-7000-8000-000000000000' }] } });
    const res = await rememberSync(t, 'judge', 'Fay lives in Oslo.');
    expect(res.body.memories).toMatchObject([{ relation: 'duplicate' }]);
    expect(fake.callsNamed('judge_facts').length - before).toBe(2);
    expect((await t.api('GET', `${col('judge')}/health`)).body.supersessions).toBe(0);
  });

  it('time-bound facts expire: hidden at once from profile and health current, swept by the hourly task', async () => {
    const t = await tenant();
    const past = new Date(Date.now() - 60_000).toISOString();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const res = await rememberSync(t, 'exp', `Gil is in Rome (until ${past}). Gil is on leave (until ${future}). Gil likes opera.`);
    expect(res.body.memories.map((m: any) => m.expires_at)).toEqual([past, future, null]);
    const health = (await t.api('GET', `${col('exp')}/health`)).body;
    // 3 facts + the archived raw memory.
    expect(health).toMatchObject({ exists: true, total: 4, expired: 1, current: 3, needs_attention: 1 });
    const profile = (await t.api('GET', `${col('exp')}/profile`)).body;
    expect(profile.based_on).toBe(2);

    expect(crontab).toContainEqual({ task: 'expire_memories', match: '0 * * * *' });
    const sweep = tasks.find((task) => task.name === 'expire_memories')!;
    await sweep.run(server.app, {}, { attempt: 1, maxAttempts: 1 });
    const rows = await server.app.db.query<{ text: string; expired: boolean }>(
      `select text, expired_at is not null as expired from memories where tenant_id = $1 and category <> 'other' order by text`,
      [t.id],
    );
    expect(rows).toEqual([
      { text: 'Gil is in Rome.', expired: true },
      { text: 'Gil is on leave.', expired: false },
      { text: 'Gil likes opera.', expired: false },
    ]);
  });

  it('rejects bad input and unknown jobs', async () => {
    const t = await tenant();
    expect((await t.api('POST', `${col('v')}/remember`, { content: '' })).status).toBe(422);
    expect((await t.api('POST', `${col('v')}/remember`, { content: 'x'.repeat(10_001) })).status).toBe(422);
    expect((await t.api('POST', `${col('v')}/remember`, { content: 'ok', importance: 2 })).status).toBe(422);
    expect((await t.api('POST', `${col('v')}/remember?sync=maybe`, { content: 'ok' })).status).toBe(422);
    expect((await t.api('POST', `${col('.bad')}/remember`, { content: 'ok' })).status).toBe(422);
    expect((await t.api('GET', '/v1/memory/extract/job/not-a-uuid')).status).toBe(404);
    expect((await t.api('GET', '/v1/memory/extract/job/01900000-0000-7000-8000-000000000000')).status).toBe(404);
    const ro = await t.newKey('reader', true);
    expect((await t.api('POST', `${col('v')}/remember`, { content: 'ok' }, ro.key)).status).toBe(403);
    const job = await t.api('POST', `${col('v')}/remember`, { content: 'Hal keeps bees.' });
    expect((await t.api('GET', `/v1/memory/extract/job/${job.body.job_id}`, undefined, ro.key)).status).toBe(200);
    const other = await tenant();
    expect((await other.api('GET', `/v1/memory/extract/job/${job.body.job_id}`)).status).toBe(404);
  });

  it('is an MCP tool, and the reports are too', async () => {
    const t = await tenant();
    const client = await mcpClient(server.url, t.key);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      for (const n of [
        'remember',
        'get_extraction_job',
        'list_contradictions',
        'get_profile',
        'summarize_collection',
        'collection_health',
        'dedup_memories',
        'archive_stale_memories',
      ]) {
        expect(names).toContain(n);
      }
      const res = await client.callTool({ name: 'remember', arguments: { collection: 'mcp', content: 'Ivy speaks Greek.', sync: true } });
      expect(res.isError).toBeFalsy();
      expect(res.structuredContent).toMatchObject({ created: 1, memories: [{ text: 'Ivy speaks Greek.', type: 'fact' }] });
      const health = await client.callTool({ name: 'collection_health', arguments: { collection: 'mcp' } });
      expect(health.structuredContent).toMatchObject({ exists: true, total: 2 });
    } finally {
      await client.close();
    }
  });
});

describe('remember over tRPC', () => {
  it('is a typed mutation, the reports typed queries, and an LLM failure is BAD_GATEWAY', async () => {
    const t = await tenant();
    const api = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${server.url}/trpc`, headers: { authorization: `Bearer ${t.key}` } })] });
    const res = await api.graph.remember.mutate({ collection: 'rpc', content: 'Jon plays chess.', sync: true });
    expect('created' in res && res.memories[0]!.type).toBe('fact');
    expect((await api.hygiene.health.query({ collection: 'rpc' })).total).toBe(2);
    fake.script('extract_facts', { content: '?' }, { content: '?' });
    const err = (await api.graph.remember
      .mutate({ collection: 'rpc', content: 'Jon plays go.', sync: true })
      .catch((e: unknown) => e)) as TRPCClientError<AppRouter>;
    expect(err.data?.code).toBe('BAD_GATEWAY');
    expect(err.data?.httpStatus).toBe(502);
  });
});

describe('remember without any LLM (heuristics)', () => {
  let bare: TestServer;
  beforeAll(async () => {
    bare = await startServer();
  });
  afterAll(() => bare?.close());

  it('extracts one fact per sentence with preference cues, naming the user, and never supersedes', async () => {
    const t = await newTenant(bare.url, bare.adminKey);
    const res = await rememberSync(t, 'h', 'I prefer window seats. My badge number is 4411! Yesterday I met Jo. ok');
    expect(res.status).toBe(200);
    // The user's first person names its holder (docs/graph.md, "What remember keeps").
    expect(res.body.memories.map((m: any) => [m.text, m.type, m.relation])).toEqual([
      ['The user prefers window seats.', 'preference', 'new'],
      ["The user's badge number is 4411!", 'fact', 'new'],
      ['Yesterday the user met Jo.', 'episode', 'new'],
    ]);
    const again = await rememberSync(t, 'h', 'My badge number is 4411. I prefer aisle seats.');
    expect(again.body.memories.map((m: any) => m.relation)).toEqual(['duplicate', 'new']);
    expect((await t.api('GET', `${col('h')}/health`)).body.supersessions).toBe(0);
  });

  it('runs the job path to done as well', async () => {
    const t = await newTenant(bare.url, bare.adminKey);
    const res = await t.api('POST', `${col('h')}/remember`, { content: 'Kim likes dark chocolate.' });
    const { job } = await pollJob(t, res.body.job_id);
    expect(job).toMatchObject({ state: 'done', facts: [{ text: 'Kim likes dark chocolate.', type: 'preference', relation: 'new' }] });
  });
});

describe('a remember job acts as the agent that called remember', () => {
  let quiet: TestServer;
  beforeAll(async () => {
    // No worker: each test runs the job itself once it has changed the agent's access.
    quiet = await startServer({}, { worker: false });
  });
  afterAll(() => quiet?.close());

  /** One try of the job, as the queue runs it: the job runner resolves the agent and its grant first. */
  const runJob = (t: Tenant, jobId: string) =>
    tasks.find((task) => task.name === extractionJob.name)!.run(quiet.app, { tenant_id: t.id, job_id: jobId }, { attempt: 1, maxAttempts: 3 });

  /** A tenant whose agent `label` called remember on "notes"; the job waits. */
  async function queued(label: string) {
    const t = await newTenant(quiet.url, quiet.adminKey);
    const agent = await t.newKey(label);
    const res = await t.api('POST', `${col('notes')}/remember`, { content: 'Lea plays the harp.' }, agent.key);
    expect(res.status).toBe(202);
    const ownerId = (await t.api('GET', '/v1/memory/agents')).body.find((a: any) => a.id !== agent.id).id as string;
    return { t, agent, ownerId, jobId: res.body.job_id as string };
  }
  const texts = async (t: Tenant, key?: string) =>
    ((await t.api('GET', `${col('notes')}/memories?include_archived=true`, undefined, key)).body as any[]).map((m) => m.text);

  it('fails with the reason, extracting nothing, when the agent lost its grant before the job ran', async () => {
    const { t, agent, ownerId, jobId } = await queued('writer');
    // Restricted to the owner's key: the writer is granted nothing on it any more.
    expect((await t.api('PUT', `${col('notes')}/grants`, { agent_key_id: ownerId, can_read: true, can_write: true })).status).toBe(200);
    await runJob(t, jobId);
    const job = (await t.api('GET', `/v1/memory/extract/job/${jobId}`)).body;
    expect(job).toMatchObject({ state: 'failed', complete: true, facts: [], error: 'The API key "writer" is not granted write access to collection "notes"' });
    expect(await texts(t)).toEqual(['Lea plays the harp.']);
    // The job's state is the collection's content: the writer may not read it either.
    const hidden = await t.api('GET', `/v1/memory/extract/job/${jobId}`, undefined, agent.key);
    expect(hidden.status).toBe(403);
    expect(hidden.body.detail).toContain('read');
  });

  it("fails with the reason when the agent's key was revoked before the job ran", async () => {
    const { t, agent, jobId } = await queued('leaver');
    expect((await t.api('DELETE', `/v1/memory/keys/${agent.id}`)).status).toBe(204);
    await runJob(t, jobId);
    const job = (await t.api('GET', `/v1/memory/extract/job/${jobId}`)).body;
    expect(job).toMatchObject({ state: 'failed', facts: [], error: 'The API key "leaver" has been revoked' });
    expect(await texts(t)).toEqual(['Lea plays the harp.']);
  });

  it("goes on as the agent's new key after a rotation, which holds its grants", async () => {
    const { t, agent, jobId } = await queued('rotator');
    expect((await t.api('PUT', `${col('notes')}/grants`, { agent_key_id: agent.id, can_read: true, can_write: true })).status).toBe(200);
    const rotated = await t.api('POST', '/v1/memory/admin/rotate-key', {}, agent.key);
    expect(rotated.status).toBe(200);
    await runJob(t, jobId);
    const job = (await t.api('GET', `/v1/memory/extract/job/${jobId}`, undefined, rotated.body.api_key)).body;
    expect(job).toMatchObject({ state: 'done', facts: [{ text: 'Lea plays the harp.' }] });
    const facts = (await t.api('GET', `${col('notes')}/memories`, undefined, rotated.body.api_key)).body as any[];
    expect(facts.map((m) => m.created_by)).toEqual([{ id: rotated.body.id, label: 'rotator' }]);
  });
});

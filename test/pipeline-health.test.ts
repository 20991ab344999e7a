import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractBySentence, playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { col, pollJob } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

let fake: FakeLlm;
let server: TestServer;
let t: Tenant;
let failedJob: string;
// While down, every extraction meets a failing endpoint.
let llmDown = true;
const none = { failed_extractions: 0, stuck_extractions: 0, failed_files: 0, stuck_files: 0, failed_proxy_stores: 0, failed_graph_fills: 0 };

beforeAll(async () => {
  fake = await startFakeLlm();
  playMemoryModel(fake);
  fake.on('extract_facts', (c) => (llmDown ? { status: 500, message: 'model overloaded' } : extractBySentence(c)));
  server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model', ORGMEM_LLM_MAX_RETRIES: '0' });
  t = await newTenant(server.url, server.adminKey);
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const health = async (collection: string) => (await t.api('GET', `${col(collection)}/health`)).body;
const stats = async () => (await t.api('GET', '/v1/memory/admin/stats')).body;
const probe = async () => (await call(server.url, 'GET', '/v1/memory/health')).body.status;
const retry = (jobId: string, key?: string) => t.api('POST', `/v1/memory/extract/job/${jobId}/retry`, undefined, key);
/** Moves a row's last progress back in time, as a job whose worker stalled would leave it. */
const backdate = (table: string, state: string, where: string, params: unknown[]) =>
  server.app.db.query(`update ${table} set state = '${state}', updated_at = now() - interval '20 minutes' where ${where}`, params);

async function remember(collection: string, content: string) {
  const res = await t.api('POST', `${col(collection)}/remember`, { content });
  expect(res.status).toBe(202);
  return (await pollJob(t, res.body.job_id)).job;
}

describe('pipeline health', () => {
  it('a failed extraction shows in the collection health and the account stats', { timeout: 60_000 }, async () => {
    const job = await remember('broken', 'Cleo plays the cello.');
    expect(job).toMatchObject({ state: 'failed', attempts: 3 });
    failedJob = job.job_id;

    const h = await health('broken');
    expect(h.jobs).toEqual({ ...none, failed_extractions: 1 });
    // needs_attention keeps its meaning (docs/graph.md, "Reports and hygiene"): memories, not jobs.
    expect(h.needs_attention).toBe(0);
    expect((await health('elsewhere')).jobs).toEqual(none);
    expect((await stats()).jobs).toEqual({ ...none, failed_extractions: 1 });
    // Failed work is the tenant's to see; the queue itself still drains.
    expect(await probe()).toBe('healthy');
  });

  it('work without progress for 20 minutes counts as stuck and makes the public probe degraded', { timeout: 30_000 }, async () => {
    llmDown = false;
    const job = await remember('slow', 'Dan rides a blue bike.');
    expect(job.state).toBe('done');
    await backdate('extraction_jobs', 'processing', 'tenant_id = $1 and id = $2', [t.id, job.job_id]);
    expect((await health('slow')).jobs).toEqual({ ...none, stuck_extractions: 1 });
    expect((await stats()).jobs).toEqual({ ...none, failed_extractions: 1, stuck_extractions: 1 });
    expect(await probe()).toBe('degraded');
    // A job that moved a moment ago is not stuck.
    await server.app.db.query(`update extraction_jobs set updated_at = now() where tenant_id = $1 and id = $2`, [t.id, job.job_id]);
    expect((await health('slow')).jobs).toEqual(none);
    expect(await probe()).toBe('healthy');
    await server.app.db.query(`update extraction_jobs set state = 'done' where tenant_id = $1 and id = $2`, [t.id, job.job_id]);
  });

  it('counts failed and stuck ingested files of the collection their batch fills', async () => {
    const batch = randomUUID();
    await server.app.db.query(`insert into ingest_batches (tenant_id, id, collection, agent_label, source) values ($1, $2, 'docs', 'test', 'upload')`, [
      t.id,
      batch,
    ]);
    await server.app.db.query(
      `insert into ingest_files (tenant_id, batch_id, key, filename, content_type, size, state)
       values ($1, $2, 'a', 'a.pdf', 'application/pdf', 1, 'failed'), ($1, $2, 'b', 'b.pdf', 'application/pdf', 1, 'queued'),
              ($1, $2, 'c', 'c.pdf', 'application/pdf', 1, 'done')`,
      [t.id, batch],
    );
    expect((await health('docs')).jobs).toEqual({ ...none, failed_files: 1 });
    await backdate('ingest_files', 'queued', 'tenant_id = $1 and batch_id = $2 and key = $3', [t.id, batch, 'b']);
    expect((await health('docs')).jobs).toEqual({ ...none, failed_files: 1, stuck_files: 1 });
    expect((await health('broken')).jobs).toEqual({ ...none, failed_extractions: 1 });
    expect((await stats()).jobs).toEqual({ ...none, failed_extractions: 1, failed_files: 1, stuck_files: 1 });
    expect(await probe()).toBe('degraded');
    await server.app.db.query(`delete from ingest_batches where tenant_id = $1 and id = $2`, [t.id, batch]);
    expect(await probe()).toBe('healthy');
  });

  it('retry needs write on the job and is refused for other tenants and unknown jobs', async () => {
    const readOnly = await t.newKey('reader', true);
    expect((await retry(failedJob, readOnly.key)).status).toBe(403);
    // The collection restricted to a key granted only read on it.
    const agent = await t.newKey('agent');
    const ownerId = (await t.api('GET', '/v1/memory/agents')).body.find((a: any) => a.label === 'default').id;
    for (const [id, write] of [
      [ownerId, true],
      [agent.id, false],
    ] as const) {
      expect((await t.api('PUT', `${col('broken')}/grants`, { agent_key_id: id, can_read: true, can_write: write })).status).toBe(200);
    }
    const refused = await retry(failedJob, agent.key);
    expect(refused.status).toBe(403);
    expect(typeof refused.body.detail).toBe('string');

    const other = await newTenant(server.url, server.adminKey);
    for (const id of [failedJob, randomUUID(), 'not-a-job']) {
      const res = await other.api('POST', `/v1/memory/extract/job/${id}/retry`);
      expect(res.status).toBe(404);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await t.api('GET', `/v1/memory/extract/job/${failedJob}`)).body).toMatchObject({ state: 'failed', attempts: 3 });
  });

  it('a failed job retried runs again and ends done; a job that is not failed answers 409', { timeout: 30_000 }, async () => {
    llmDown = false;
    const res = await retry(failedJob);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ job_id: failedJob, collection: 'broken', state: 'queued', complete: false, attempts: 0, error: null });
    const { job } = await pollJob(t, failedJob);
    expect(job).toMatchObject({ state: 'done', attempts: 1, error: null });
    expect(job.facts.map((f: any) => f.text)).toEqual(['Cleo plays the cello.']);
    expect((await health('broken')).jobs).toEqual(none);

    const again = await retry(failedJob);
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain('done');
  });
});

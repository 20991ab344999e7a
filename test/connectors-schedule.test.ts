import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../host/app.ts';
import { enqueueDueSyncs } from '../src/services/connectors/sync.ts';
import { startReceiver } from './fakes/webhook-receiver.ts';
import { startHubspotFake } from './fakes/providers/hubspot.ts';
import { startLinearFake } from './fakes/providers/linear.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * The scheduler, one sync per connection at a time, the webhook events of a sync and the operator's
 * views. The worker starts half-way, once the tests that need no background work have run.
 */
let server: TestServer;
let linear: ProviderFake;
let hubspot: ProviderFake;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  linear = await startLinearFake();
  hubspot = await startHubspotFake();
  receiver = await startReceiver();
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_LINEAR_API_URL: linear.url, ORGMEM_HUBSPOT_API_URL: hubspot.url }, { worker: false });
});
afterAll(async () => {
  await server?.close();
  await linear?.close();
  await hubspot?.close();
  await receiver?.close();
});

async function connect(t: Tenant, fake: ProviderFake, provider: string, config: Record<string, unknown> = {}) {
  const { credentials } = fake.connection();
  const res = await t.api('POST', '/v1/memory/connections', { provider, collection: 'sched', credentials, config });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

const setRow = (id: string, assignments: string) => server.app.db.query(`update connections set ${assignments} where id = $1`, [id]);

/** Scheduled sync jobs waiting in the queue, for either queue. */
async function queuedSyncs(): Promise<number> {
  const sql =
    server.app.db.kind === 'postgres'
      ? `select count(*)::int as n from graphile_worker.jobs where task_identifier = 'connector_sync' and locked_at is null`
      : `select count(*)::int as n from jobs where task = 'connector_sync' and locked_at is null`;
  return (await server.app.db.query<{ n: number }>(sql))[0]!.n;
}

describe('connector scheduler', () => {
  let t: Tenant;
  const ids: Record<string, string> = {};

  it('takes only due connections that are not paused, and queues each once', async () => {
    t = await newTenant(server.url, server.adminKey);
    linear.put({ title: 'Scheduled issue', body: 'Found by the scheduler.' });
    ids.fresh = await connect(t, linear, 'linear');
    ids.recent = await connect(t, linear, 'linear');
    expect((await t.api('POST', `/v1/memory/connections/${ids.recent}/sync`)).body.status).toBe('active');
    ids.short = await connect(t, linear, 'linear', { sync_interval_minutes: 5 });
    expect((await t.api('POST', `/v1/memory/connections/${ids.short}/sync`)).body.status).toBe('active');
    await setRow(ids.short, `last_sync_at = now() - interval '6 minutes'`);
    ids.longer = await connect(t, linear, 'linear', { sync_interval_minutes: 600 });
    await setRow(ids.longer, `last_sync_at = now() - interval '2 hours'`);
    ids.paused = await connect(t, linear, 'linear');
    await setRow(ids.paused, `status = 'paused', failures = 5`);
    ids.errored = await connect(t, hubspot, 'hubspot');
    hubspot.failNext(401);
    expect((await t.api('POST', `/v1/memory/connections/${ids.errored}/sync`)).body.status).toBe('error');
    await setRow(ids.errored, `last_sync_at = now() - interval '61 minutes'`);
    const pg = await t.api('POST', '/v1/memory/connections', { provider: 'postgres', collection: 'sched', credentials: {}, config: {} });
    ids.postgres = pg.body.id;

    const mine = (queued: string[]) =>
      Object.entries(ids)
        .filter(([, id]) => queued.includes(id))
        .map(([name]) => name)
        .sort();
    expect(mine(await enqueueDueSyncs(server.app))).toEqual(['errored', 'fresh', 'short']);
    const waiting = await queuedSyncs();
    // Due again a minute later (nothing ran): still one waiting job per connection.
    expect(mine(await enqueueDueSyncs(server.app))).toEqual(['errored', 'fresh', 'short']);
    expect(await queuedSyncs()).toBe(waiting);
  });

  it('runs one sync per connection at a time: a second one meanwhile answers 409', async () => {
    const id = await connect(t, linear, 'linear');
    linear.failNext(429); // the first sync waits a second (Retry-After: 1) holding the connection
    const first = t.api('POST', `/v1/memory/connections/${id}/sync`);
    await new Promise((r) => setTimeout(r, 300));
    const second = await t.api('POST', `/v1/memory/connections/${id}/sync`);
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(/running/);
    expect((await first).body.status).toBe('active');
    expect((await t.api('POST', `/v1/memory/connections/${id}/sync`)).status).toBe(200);
  });

  it('the worker runs the queued syncs; paused and recent connections are left alone', async () => {
    const before = Object.fromEntries(
      await Promise.all(Object.entries(ids).map(async ([name, id]) => [name, (await t.api('GET', `/v1/memory/connections/${id}`)).body] as const)),
    );
    await startWorker(server.app);
    for (const name of ['fresh', 'short', 'errored']) {
      await until(`${name} synced`, async () => {
        const runs = (await t.api('GET', `/v1/memory/connections/${ids[name]}/runs`)).body as unknown[];
        return runs.length > (name === 'fresh' ? 0 : 1) ? true : undefined;
      });
    }
    expect((await t.api('GET', `/v1/memory/connections/${ids.fresh}`)).body).toMatchObject({ status: 'active', last_sync_at: expect.any(String) });
    // The errored connection's token works again: its scheduled sync makes it active.
    expect((await t.api('GET', `/v1/memory/connections/${ids.errored}`)).body).toMatchObject({ status: 'active', consecutive_failures: 0 });
    for (const name of ['recent', 'paused', 'longer']) {
      expect((await t.api('GET', `/v1/memory/connections/${ids[name]}`)).body.last_sync_at, name).toBe(before[name].last_sync_at);
    }
  });

  it('a sync sends memory.created for new records and memory.updated for changed ones', async () => {
    const w = await newTenant(server.url, server.adminKey);
    expect((await w.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
    const id = await connect(w, linear, 'linear', { sync_interval_minutes: 100_000 });
    const created = (await w.api('POST', `/v1/memory/connections/${id}/sync`)).body.synced as number;
    expect(created).toBeGreaterThan(0);
    const events = () => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { memory: { id: string; text: string } } });
    await until('created events', async () => (events().filter((e) => e.type === 'memory.created').length >= created ? true : undefined));
    const record = linear.put({ title: 'Webhook issue', body: 'first text' });
    await w.api('POST', `/v1/memory/connections/${id}/sync`);
    linear.put({ id: record.id, title: 'Webhook issue', body: 'second text' });
    expect((await w.api('POST', `/v1/memory/connections/${id}/sync`)).body.synced).toBe(1);
    await until('updated event', async () =>
      events().some((e) => e.type === 'memory.updated' && e.data.memory.text.includes('second text')) ? true : undefined,
    );
    const mine = events().filter((e) => e.data.memory.text.includes('Webhook issue'));
    expect(mine.map((e) => e.type)).toEqual(['memory.created', 'memory.updated']);
    expect(mine[0]!.data.memory.id).toBe(mine[1]!.data.memory.id);
  });

  it('operators see runs and errors per provider and the status counts, with no tenant content', async () => {
    const admin = await newTenant(server.url, server.adminKey, { admin: true });
    const health = await admin.api('GET', '/v1/memory/admin/connectors?hours=1');
    expect(health.status).toBe(200);
    const byProvider = Object.fromEntries(
      (health.body.providers as Array<{ provider: string; runs: number; errors: number; last_run: string }>).map((p) => [p.provider, p]),
    );
    expect(byProvider.linear!.runs).toBeGreaterThanOrEqual(5);
    expect(byProvider.hubspot).toMatchObject({ errors: 1, last_run: expect.stringMatching(/Z$/) });
    expect(byProvider.hubspot!.runs).toBeGreaterThanOrEqual(2);
    const status = await admin.api('GET', '/v1/memory/admin/connectors/status');
    expect(status.body).toEqual(
      expect.arrayContaining([
        { status: 'paused', n: expect.any(Number) },
        { status: 'active', n: expect.any(Number) },
      ]),
    );
    const body = JSON.stringify([health.body, status.body]);
    expect(body).not.toMatch(/Scheduled issue|Webhook issue|sched/);
    expect(body).not.toContain(t.id);
  });
});

import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateTargetError } from '../src/ports/public-target.ts';
import { postWebhook } from '../src/services/events/webhook-http.ts';
import { EVENT_TRIES, flushWebhook, SUSPEND_AFTER } from '../src/services/events/webhook-outbox.ts';
import { startReceiver, type Behaviour, type Received } from './fakes/webhook-receiver.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { OPEN, PUBLIC_ONLY } from './support/targets.ts';

const parse = (r: Received) => JSON.parse(r.body) as { id: string; type: string; created_at: string; data: { collection: string; memory: any } };
const sign = (secret: string, raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
/** What GET answers without a webhook. */
const NONE = {
  url: null,
  created_at: null,
  state: 'none',
  last_delivered_at: null,
  last_error: null,
  last_error_at: null,
  failures: 0,
  next_try_at: null,
  suspended_at: null,
  suspended_reason: null,
  pending: 0,
  dead_letters: 0,
};

describe('webhooks', () => {
  let server: TestServer;
  let behaviour: Behaviour = 204;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
    receiver = await startReceiver(() => behaviour);
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  async function subscribed(): Promise<{ t: Tenant; secret: string }> {
    const t = await newTenant(server.url, server.adminKey);
    const put = await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url });
    expect(put.status).toBe(200);
    return { t, secret: put.body.secret };
  }

  it('configures: secret shown once, GET without it (nulls when absent), DELETE (404 when absent), 422 for non-http(s) URLs', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const none = await t.api('GET', '/v1/memory/webhook/config');
    expect(none.status).toBe(200);
    expect(none.body).toEqual(NONE);
    const put = await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url });
    expect(put.body).toEqual({ url: receiver.url, secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
    const got = await t.api('GET', '/v1/memory/webhook/config');
    expect(got.body).toEqual({ ...NONE, url: receiver.url, created_at: expect.stringMatching(/Z$/), state: 'active' });
    // The secret is stored sealed, never in clear.
    const [row] = await server.app.db.query<{ secret_sealed: string }>('select secret_sealed from webhooks where tenant_id = $1', [t.id]);
    expect(row!.secret_sealed).not.toContain(put.body.secret);
    const again = await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url });
    expect(again.body.secret).not.toBe(put.body.secret);

    for (const url of ['ftp://example.com/hook', 'javascript:alert(1)', 'file:///etc/passwd', 'not a url', '']) {
      expect((await t.api('PUT', '/v1/memory/webhook/config', { url })).status, url).toBe(422);
    }
    const reader = await t.newKey('reader', true);
    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url }, reader.key)).status).toBe(403);
    expect((await t.api('DELETE', '/v1/memory/webhook/config', undefined, reader.key)).status).toBe(403);
    expect((await t.api('DELETE', '/v1/memory/webhook/config')).status).toBe(204);
    const removed = await t.api('GET', '/v1/memory/webhook/config');
    expect([removed.status, removed.body]).toEqual([200, NONE]);
    expect((await t.api('DELETE', '/v1/memory/webhook/config')).status).toBe(404);
  });

  it('sends memory.created/updated/deleted for every kind of write, signed', async () => {
    behaviour = 204;
    const { t, secret } = await subscribed();
    const start = receiver.received.length;
    const ofTenant = () => receiver.received.slice(start);
    const created = await t.api('POST', '/v1/memory/collections/inbox/memories', { text: 'order more coffee' });
    const bulk = await t.api('POST', '/v1/memory/collections/inbox/memories/bulk', [{ text: 'one' }, { text: 'two' }]);
    const id = created.body.id as string;
    expect((await t.api('PATCH', `/v1/memory/collections/inbox/memories/${id}`, { text: 'order more tea' })).status).toBe(200);
    expect((await t.api('POST', `/v1/memory/collections/inbox/memories/${id}/pin`, { pinned: true })).status).toBe(200);
    expect((await t.api('POST', `/v1/memory/collections/inbox/memories/${id}/archive`, { archived: true })).status).toBe(200);
    expect((await t.api('POST', `/v1/memory/collections/inbox/memories/${id}/move`, { to_collection: 'done' })).status).toBe(200);
    expect((await t.api('DELETE', `/v1/memory/collections/done/memories/${id}`)).status).toBe(204);
    expect((await t.api('DELETE', '/v1/memory/collections/inbox')).status).toBe(204);

    await receiver.waitFor(0, 15_000, () => ofTenant().length >= 10);
    const events = ofTenant().map((r) => ({ r, e: parse(r) }));
    for (const { r, e } of events) {
      expect(r.headers['x-service-signature']).toBe(sign(secret, r.body));
      expect(r.headers['x-service-event']).toBe(e.type);
      expect(r.headers['x-service-delivery']).toBe(e.id);
      expect(r.headers['content-type']).toBe('application/json');
      expect(Object.keys(e).sort()).toEqual(['created_at', 'data', 'id', 'type']);
    }
    const summary = events.map(({ e }) => `${e.type} ${e.data.collection} ${e.data.memory.id}${e.data.memory.text ? ` ${e.data.memory.text}` : ''}`).sort();
    const [one, two] = bulk.body.ids as string[];
    expect(summary).toEqual(
      [
        `memory.created inbox ${id} order more coffee`,
        `memory.created inbox ${one} one`,
        `memory.created inbox ${two} two`,
        `memory.updated inbox ${id} order more tea`,
        `memory.updated inbox ${id} order more tea`,
        `memory.updated inbox ${id} order more tea`,
        `memory.updated done ${id} order more tea`,
        `memory.deleted done ${id}`,
        `memory.deleted inbox ${one}`,
        `memory.deleted inbox ${two}`,
      ].sort(),
    );
    const moved = events.find(({ e }) => e.type === 'memory.updated' && e.data.collection === 'done')!.e;
    expect(moved.data.memory).toMatchObject({ id, collection: 'done', pinned: true, archived: true });
    expect(events.find(({ e }) => e.type === 'memory.deleted')!.e.data.memory).toEqual({ id: expect.any(String) });
    expect(new Set(events.map(({ e }) => e.id)).size).toBe(10);
  });

  it('sends events for hygiene writes too: dedup deletes, archive-stale updates', async () => {
    behaviour = 204;
    const { t } = await subscribed();
    const first = await t.api('POST', '/v1/memory/collections/h/memories', { text: 'the printer is on floor two' });
    const copy = await t.api('POST', '/v1/memory/collections/h/memories', { text: 'the printer is on floor two' });
    const other = await t.api('POST', '/v1/memory/collections/h/memories', { text: 'lunch is at noon', importance: 0.9 });
    const dedup = await t.api('POST', '/v1/memory/collections/h/dedup', { threshold: 0.99, dry_run: false });
    expect(dedup.body.deleted).toBe(1);
    const [gone] = dedup.body.ids as string[];
    const kept = gone === first.body.id ? copy.body.id : first.body.id;
    const stale = await t.api('POST', '/v1/memory/collections/h/archive-stale', { older_than_days: 0, dry_run: false });
    expect(stale.body.archived).toBe(2);
    const mine = (all: Received[]) => all.map(parse).filter((e) => [first.body.id, copy.body.id, other.body.id].includes(e.data.memory.id));
    const events = mine(await receiver.waitFor(0, 15_000, (all) => mine(all).length >= 6));
    const summary = events.filter((e) => e.type !== 'memory.created').map((e) => `${e.type} ${e.data.memory.id} ${e.data.memory.archived ?? ''}`);
    expect(summary.sort()).toEqual([`memory.deleted ${gone} `, `memory.updated ${kept} true`, `memory.updated ${other.body.id} true`].sort());
  });

  it('sends nothing for tenants without a webhook, nor for failed writes', async () => {
    const { t } = await subscribed();
    const quiet = await newTenant(server.url, server.adminKey);
    const start = receiver.received.length;
    expect((await quiet.api('POST', '/v1/memory/collections/x/memories', { text: 'unheard' })).status).toBe(201);
    expect((await t.api('POST', '/v1/memory/collections/x/memories', { text: '' })).status).toBe(422);
    expect((await t.api('POST', '/v1/memory/collections/x/memories', { text: 'heard' })).status).toBe(201);
    const got = await receiver.waitFor(start + 1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(got.slice(start).map((r) => parse(r).data.memory.text)).toEqual(['heard']);
  });

  it('delivers asynchronously: a receiver that hangs does not hold up the API, and is given up after 5 s', async () => {
    behaviour = 'hang';
    try {
      const { t } = await subscribed();
      const start = receiver.received.length;
      const res = await t.api('POST', '/v1/memory/collections/slow/memories', { text: 'the receiver will hang' });
      expect(res.status).toBe(201);
      // Had delivery been part of the write, the answer would have come only after the
      // sender gave up on the hanging receiver; it came while nothing had been given up.
      expect(receiver.received.slice(start).every((r) => r.closedAt === undefined)).toBe(true);
      const [first] = (await receiver.waitFor(0, 20_000, (all) => all.slice(start).some((r) => r.closedAt !== undefined))).slice(start);
      expect(parse(first!).data.memory.id).toBe(res.body.id);
      const heldFor = first!.closedAt! - first!.at;
      expect(heldFor).toBeGreaterThanOrEqual(4_800);
      expect(heldFor).toBeLessThan(7_000);
    } finally {
      behaviour = 204;
    }
  }, 30_000);

  it('retries a failing receiver (best effort, a few tries)', async () => {
    behaviour = 500;
    const { t } = await subscribed();
    const res = await t.api('POST', '/v1/memory/collections/retry/memories', { text: 'try again' });
    // (Earlier tests' retries may still arrive: look at this event's deliveries only.)
    const mine = (all: Received[]) => all.filter((r) => parse(r).data.memory.id === res.body.id);
    const tries = mine(await receiver.waitFor(0, 20_000, (all) => mine(all).length >= 2));
    behaviour = 204;
    expect(tries.map((r) => parse(r).type)).toEqual(['memory.created', 'memory.created']);
    // The same event (same delivery id) is tried again.
    expect(new Set(tries.map((r) => r.headers['x-service-delivery'])).size).toBe(1);
    // The tenant sees why, on its webhook: the status, never the receiver's body.
    const event = tries[0]!.headers['x-service-delivery'];
    const hook = (await t.api('GET', '/v1/memory/webhook/config')).body;
    expect(hook).toMatchObject({
      last_delivered_at: null,
      last_error: `Event ${event} (memory.created) failed: the target answered 500`,
      last_error_at: expect.stringMatching(/Z$/),
    });
    // A later success is recorded beside it; a new URL starts afresh.
    expect((await t.api('POST', '/v1/memory/collections/retry/memories', { text: 'delivered' })).status).toBe(201);
    await expect.poll(async () => (await t.api('GET', '/v1/memory/webhook/config')).body.last_delivered_at, { timeout: 15_000 }).toMatch(/Z$/);
    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
    expect((await t.api('GET', '/v1/memory/webhook/config')).body).toMatchObject({ last_delivered_at: null, last_error: null, last_error_at: null });
  }, 30_000);
});

describe('a receiver that keeps failing', () => {
  let server: TestServer;
  let behaviour: Behaviour = 500;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    // No worker: the test runs each flush itself, and moves the back-off's clock in the database.
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
    receiver = await startReceiver(() => behaviour);
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });
  const flush = (t: Tenant) => flushWebhook(server.app, t.id);
  /** Time passes: the webhook's back-off is over. */
  const backOffOver = (t: Tenant) => server.app.db.query('update webhooks set next_try_at = now() where tenant_id = $1 and next_try_at is not null', [t.id]);
  const hook = async (t: Tenant) => (await t.api('GET', '/v1/memory/webhook/config')).body;

  it('is backed off, then suspended with the reason; its events become dead letters, replayed once it is resumed', async () => {
    behaviour = 500;
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
    const texts = ['e1', 'e2', 'e3', 'e4'];
    const written = await t.api(
      'POST',
      '/v1/memory/collections/b/memories/bulk',
      texts.map((text) => ({ text })),
    );
    expect(written.status).toBe(201);
    const start = receiver.received.length;

    await flush(t);
    expect(receiver.received.length - start).toBe(1);
    const first = parse(receiver.received[start]!);
    expect(first.data.memory.text).toBe('e1');
    expect(await hook(t)).toMatchObject({
      state: 'backing_off',
      failures: 1,
      next_try_at: expect.stringMatching(/Z$/),
      pending: 4,
      dead_letters: 0,
      last_error: `Event ${first.id} (memory.created) failed: the target answered 500`,
    });
    // While backing off, a flush sends nothing.
    await flush(t);
    expect(receiver.received.length - start).toBe(1);

    for (let i = 2; i <= SUSPEND_AFTER; i++) {
      await backOffOver(t);
      await flush(t);
    }
    // Every try was of the oldest event until its tries ran out, then of the next.
    const tried = receiver.received.slice(start).map((r) => parse(r).data.memory.text);
    expect(tried).toEqual(['e1', 'e1', 'e1', 'e2', 'e2', 'e2', 'e3', 'e3', 'e3', 'e4']);
    expect(SUSPEND_AFTER).toBe(10);
    expect(EVENT_TRIES).toBe(3);
    const suspended = await hook(t);
    expect(suspended).toMatchObject({
      state: 'suspended',
      failures: SUSPEND_AFTER,
      next_try_at: null,
      suspended_at: expect.stringMatching(/Z$/),
      suspended_reason: expect.stringMatching(/^10 tries in a row failed; the last: Event \S+ \(memory\.created\) failed: the target answered 500$/),
      pending: 0,
      dead_letters: 4,
    });
    // A suspended webhook is not tried; a write meanwhile is kept as a dead letter at once.
    expect((await t.api('POST', '/v1/memory/collections/b/memories', { text: 'e5' })).status).toBe(201);
    await flush(t);
    expect(receiver.received.length - start).toBe(SUSPEND_AFTER);
    const dead = (await t.api('GET', '/v1/memory/webhook/dead-letters')).body;
    expect(dead.total).toBe(5);
    expect(dead.events.map((e: { attempts: number }) => e.attempts).sort()).toEqual([0, 1, 3, 3, 3]);
    expect(dead.events.find((e: { attempts: number }) => e.attempts === 0).last_error).toBe('The webhook was suspended when the event happened');
    expect((await t.api('GET', '/v1/memory/webhook/dead-letters?limit=2')).body).toMatchObject({ events: [expect.anything(), expect.anything()], total: 5 });
    const replay = await t.api('POST', '/v1/memory/webhook/dead-letters/replay', {});
    expect([replay.status, replay.body.detail]).toEqual([409, 'The webhook is suspended: resume it first (POST /v1/memory/webhook/resume)']);

    // A failed test changes nothing; a successful one resumes.
    const failedTest = await t.api('POST', '/v1/memory/webhook/test');
    expect(failedTest.body).toEqual({ delivered: false, status: 500, error: 'the target answered 500', resumed: false });
    expect((await hook(t)).state).toBe('suspended');
    behaviour = 204;
    const test = await t.api('POST', '/v1/memory/webhook/test');
    expect(test.body).toEqual({ delivered: true, status: 204, error: null, resumed: true });
    const sent = parse(receiver.received.at(-1)!);
    expect([sent.type, sent.data]).toEqual(['webhook.test', {}]);
    expect(await hook(t)).toMatchObject({ state: 'active', failures: 0, suspended_at: null, suspended_reason: null, dead_letters: 5 });

    // Replayed dead letters go out with their own event ids: the named one, then the rest, oldest first.
    expect((await t.api('POST', '/v1/memory/webhook/dead-letters/replay', { ids: [first.id] })).body).toEqual({ replayed: 1 });
    await flush(t);
    expect(receiver.received.at(-1)!.headers['x-service-delivery']).toBe(first.id);
    expect((await t.api('POST', '/v1/memory/webhook/dead-letters/replay', {})).body).toEqual({ replayed: 4 });
    await flush(t);
    expect(await hook(t)).toMatchObject({ state: 'active', pending: 0, dead_letters: 0, last_delivered_at: expect.stringMatching(/Z$/) });
    expect(receiver.received.slice(-4).map((r) => parse(r).data.memory.text)).toEqual(['e2', 'e3', 'e4', 'e5']);
  });

  it('is resumed by a request, and a new URL starts afresh; every route answers 404 without a webhook', async () => {
    behaviour = 500;
    const t = await newTenant(server.url, server.adminKey);
    for (const [method, path] of [
      ['POST', '/v1/memory/webhook/resume'],
      ['POST', '/v1/memory/webhook/test'],
    ] as const) {
      const res = await t.api(method, path);
      expect([res.status, res.body.detail]).toEqual([404, 'No webhook is configured']);
    }
    expect((await t.api('GET', '/v1/memory/webhook/dead-letters')).body).toEqual({ events: [], total: 0 });
    expect((await t.api('POST', '/v1/memory/webhook/dead-letters/replay', { ids: ['not-an-id'] })).status).toBe(422);
    expect((await t.api('POST', '/v1/memory/webhook/dead-letters/replay', { ids: [] })).status).toBe(422);
    expect((await t.api('GET', '/v1/memory/webhook/dead-letters?limit=0')).status).toBe(422);

    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
    expect((await t.api('POST', '/v1/memory/collections/r/memories', { text: 'held' })).status).toBe(201);
    await flush(t);
    expect((await hook(t)).state).toBe('backing_off');
    const reader = await t.newKey('reader', true);
    expect((await t.api('POST', '/v1/memory/webhook/resume', undefined, reader.key)).status).toBe(403);
    behaviour = 204;
    const resumed = await t.api('POST', '/v1/memory/webhook/resume');
    expect(resumed.body).toMatchObject({ state: 'active', failures: 0, next_try_at: null, pending: 1 });
    await flush(t);
    expect(await hook(t)).toMatchObject({ state: 'active', failures: 0, pending: 0 });

    // Suspended, then a new URL: a fresh start, its dead letters kept.
    await server.app.db.query(`update webhooks set suspended_at = now(), suspended_reason = 'test' where tenant_id = $1`, [t.id]);
    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
    expect(await hook(t)).toMatchObject({ state: 'active', failures: 0, suspended_at: null, suspended_reason: null });
    // Removing the webhook removes what waits for it.
    expect((await t.api('DELETE', '/v1/memory/webhook/config')).status).toBe(204);
    const [left] = await server.app.db.query<{ n: number }>('select count(*)::int as n from webhook_events where tenant_id = $1', [t.id]);
    expect(left!.n).toBe(0);
  });
});

describe("one tenant's webhook cannot starve another tenant's jobs", () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    // The worker runs 4 jobs at a time, as by default.
    server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_WORKER_CONCURRENCY: '4' });
    receiver = await startReceiver(() => 'hang');
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it("a receiver that never answers gets one request at a time, and another tenant's job runs meanwhile", async () => {
    const noisy = await newTenant(server.url, server.adminKey);
    const quiet = await newTenant(server.url, server.adminKey);
    expect((await noisy.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const bulk = await noisy.api(
        'POST',
        '/v1/memory/collections/flood/memories/bulk',
        Array.from({ length: 100 }, (_, j) => ({ text: `event ${i}-${j}` })),
      );
      expect(bulk.status).toBe(201);
    }
    const remembered = await quiet.api('POST', '/v1/memory/collections/q/remember', { content: 'Ana prefers oat milk.' });
    expect(remembered.status).toBe(202);
    await expect
      .poll(async () => (await quiet.api('GET', `/v1/memory/extract/job/${remembered.body.job_id}`)).body.state, { timeout: 60_000, interval: 250 })
      .toBe('done');
    // Meanwhile the noisy tenant's receiver had one request open at most, and its events still wait.
    expect(receiver.open.most).toBe(1);
    expect(receiver.received.length).toBeLessThan(10);
    const waiting = (await noisy.api('GET', '/v1/memory/webhook/config')).body;
    expect(waiting.pending + waiting.dead_letters).toBe(300);
    expect(waiting.pending).toBeGreaterThan(290);
  }, 120_000);
});

describe('webhook targets in production mode', () => {
  let strict: TestServer;
  let lenient: TestServer;
  beforeAll(async () => {
    strict = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_PRODUCTION: '1' }, { worker: false });
    lenient = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_PRODUCTION: '1', ORGMEM_WEBHOOK_ALLOW_PRIVATE: '1' }, { worker: false });
  });
  afterAll(async () => {
    await strict?.close();
    await lenient?.close();
  });

  it('refuses private and loopback targets unless the operator allows them', async () => {
    const t = await newTenant(strict.url, strict.adminKey);
    for (const url of [
      'http://127.0.0.1:9/h',
      'http://localhost:9/h',
      'http://[::1]:9/h',
      'http://10.1.2.3/h',
      'http://192.168.0.10/h',
      'http://169.254.169.254/latest',
    ]) {
      const res = await t.api('PUT', '/v1/memory/webhook/config', { url });
      expect(res.status, url).toBe(400);
      expect(res.body.detail).toMatch(/refused/);
    }
    const allowed = await newTenant(lenient.url, lenient.adminKey);
    expect((await allowed.api('PUT', '/v1/memory/webhook/config', { url: 'http://127.0.0.1:9/h' })).status).toBe(200);
  });

  it('checks the address actually connected to at delivery', async () => {
    const receiver = await startReceiver();
    try {
      await expect(postWebhook(receiver.url, '{}', {}, PUBLIC_ONLY)).rejects.toBeInstanceOf(PrivateTargetError);
      await expect(postWebhook(`http://localhost:${receiver.port}/x`, '{}', {}, PUBLIC_ONLY)).rejects.toBeInstanceOf(PrivateTargetError);
      expect(receiver.received).toHaveLength(0);
      expect(await postWebhook(`http://localhost:${receiver.port}/x`, '{}', {}, OPEN)).toBe(204);
    } finally {
      await receiver.close();
    }
  });
});

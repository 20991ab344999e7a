import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { App } from '../src/core/context.ts';
import { LocalBlobStore } from '../src/ports/blobs/local.ts';
import { s3BlobStore } from '../src/ports/blobs/s3.ts';
import { defineJob } from '../src/ports/jobs/jobs.ts';
import { KEEP_CHECKS_DAYS, PROBE_PREFIX, recordCheck } from '../src/services/status/checks.ts';
import { tasks } from '../host/tasks.ts';
import { startFakeS3, type FakeS3 } from './fakes/s3.ts';
import { call, newTenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * The minute self-check (database, job queue lag, file store) and GET /v1/status, on the
 * database the run uses (PGlite, or PostgreSQL with TEST_DATABASE_URL). The server runs no
 * worker: nothing takes a job, so a stalled queue is one old due job, and checks are recorded
 * by calling recordCheck (what the `status_check` cron task runs) directly.
 */

let server: TestServer;
let app: App;
let s3: FakeS3;

beforeAll(async () => {
  server = await startServer({}, { worker: false });
  app = server.app;
  s3 = await startFakeS3(['platform-status']);
});
afterAll(async () => {
  await server?.close();
  await s3?.close();
});
beforeEach(async () => {
  await app.db.query('delete from status_checks');
});

const status = async () => {
  const res = await call(server.url, 'GET', '/v1/status');
  expect(res.status).toBe(200);
  return res.body;
};
const lastRow = async () => (await app.db.query<Record<string, unknown>>('select * from status_checks order by checked_at desc, id desc limit 1'))[0]!;

/** The app with its file store swapped: a directory under /dev/null cannot be created. */
const withBrokenBlobs = (): App => ({ ...app, blobs: new LocalBlobStore('/dev/null/orgmem-files', randomBytes(32)) });

/** The app with a database whose round trip fails, as a dropped connection would (other statements still run, so the check is recorded). */
const withFailingRoundTrip = (): App => {
  const db = Object.create(app.db, {
    query: {
      value: (sql: string, params?: unknown[]) =>
        sql === 'select 1' ? Promise.reject(new Error('connection refused by 10.0.0.5')) : app.db.query(sql, params),
    },
  });
  return { ...app, db, platform: db };
};

const stalledJob = defineJob('status_test_stalled', z.object({}));
const STALLED_KEY = 'status-test-stalled';
/** A job due two minutes ago that no worker took: the queue does not drain. */
const stallQueue = () => app.jobs.enqueue(app.db, stalledJob, {}, { runAt: new Date(Date.now() - 120_000), key: STALLED_KEY });
const unstallQueue = () =>
  app.db.kind === 'pglite'
    ? app.db.query('delete from jobs where task = $1', [stalledJob.name])
    : app.db.query('select graphile_worker.remove_job($1)', [STALLED_KEY]);

describe('the minute self-check', () => {
  it('passes with every component and shows them, newest first', async () => {
    expect(await recordCheck(app)).toBe('operational');
    expect(await recordCheck(app)).toBe('operational');
    const body = await status();
    expect(body).toMatchObject({
      status: 'operational',
      checked_at: expect.any(String),
      database_latency_ms: expect.any(Number),
      uptime_24h: 100,
      components: {
        database: { ok: true, latency_ms: expect.any(Number) },
        queue: { ok: true, latency_ms: expect.any(Number), lag_ms: expect.any(Number) },
        blobs: { ok: true, latency_ms: expect.any(Number), checked_at: expect.any(String) },
        // Not a Citus coordinator: no nodes to count (test/citus.test.ts checks them on one).
        nodes: null,
      },
    });
    expect(body.components.queue.lag_ms).toBeLessThan(60_000);
    expect(body.recent_checks).toHaveLength(2);
    const [newest, older] = body.recent_checks;
    expect(Date.parse(newest.checked_at)).toBeGreaterThan(Date.parse(older.checked_at));
    expect(newest).toEqual({
      checked_at: expect.any(String),
      ok: true,
      status: 'operational',
      latency_ms: expect.any(Number),
      components: {
        database: { ok: true, latency_ms: newest.latency_ms },
        queue: { ok: true, latency_ms: expect.any(Number), lag_ms: expect.any(Number) },
        blobs: { ok: true, latency_ms: expect.any(Number) },
      },
    });
    expect(body.components.blobs.checked_at).toBe(newest.checked_at);
  });

  it('leaves no probe object behind', async () => {
    const store = new LocalBlobStore((app.blobs as LocalBlobStore).root, randomBytes(32));
    expect(await recordCheck({ ...app, blobs: store })).toBe('operational');
    expect(await store.deletePrefix(PROBE_PREFIX)).toBe(0);
  });

  it('probes the platform S3 bucket: a missing bucket fails the file store', async () => {
    const opts = {
      endpoint: s3.endpoint,
      region: s3.region,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
      maxAttempts: 1,
    };
    const bucket = s3BlobStore({ ...opts, bucket: 'platform-status' });
    const missing = s3BlobStore({ ...opts, bucket: 'no-such-bucket' });
    try {
      expect(await recordCheck({ ...app, blobs: bucket })).toBe('operational');
      expect(await bucket.deletePrefix(PROBE_PREFIX)).toBe(0);
      expect(await recordCheck({ ...app, blobs: missing })).toBe('degraded');
      expect(await lastRow()).toMatchObject({ ok: false, status: 'degraded', blobs_ok: false, blobs_error: expect.stringMatching(/bucket/i) });
    } finally {
      await bucket.close();
      await missing.close();
    }
  });

  it('a broken file store makes the check fail and the state degraded, with the error recorded but not shown', async () => {
    expect(await recordCheck(withBrokenBlobs())).toBe('degraded');
    expect(await lastRow()).toMatchObject({
      ok: false,
      status: 'degraded',
      database_ok: true,
      queue_ok: true,
      blobs_ok: false,
      blobs_latency_ms: expect.any(Number),
      blobs_error: expect.stringMatching(/ENOTDIR|not a directory/),
    });
    const body = await status();
    expect(body.status).toBe('degraded');
    expect(body.components.blobs).toMatchObject({ ok: false });
    expect(body.recent_checks[0]).toMatchObject({
      ok: false,
      status: 'degraded',
      components: { database: { ok: true }, queue: { ok: true }, blobs: { ok: false } },
    });
    expect(JSON.stringify(body)).not.toMatch(/dev\/null|ENOTDIR|directory/);
    expect(body.uptime_24h).toBe(0);

    // The next check passes: the state follows the last one.
    expect(await recordCheck(app)).toBe('operational');
    const after = await status();
    expect(after.status).toBe('operational');
    expect(after.uptime_24h).toBe(50);
    expect(after.recent_checks.map((c: { ok: boolean }) => c.ok)).toEqual([true, false]);
  });

  it('a queue that does not drain makes the check fail and the state degraded', async () => {
    await stallQueue();
    try {
      expect(await recordCheck(app)).toBe('degraded');
      const row = await lastRow();
      expect(row).toMatchObject({
        ok: false,
        status: 'degraded',
        database_ok: true,
        queue_ok: false,
        blobs_ok: true,
        queue_error: expect.stringMatching(/oldest due job/),
      });
      expect(Number(row.queue_lag_ms)).toBeGreaterThan(100_000);
      const body = await status();
      // Measured for the answer too, not only by the minute check.
      expect(body.status).toBe('degraded');
      expect(body.components.queue.ok).toBe(false);
      expect(body.components.queue.lag_ms).toBeGreaterThan(100_000);
      expect(body.recent_checks[0]).toMatchObject({ ok: false, status: 'degraded', components: { queue: { ok: false, lag_ms: expect.any(Number) } } });
    } finally {
      await unstallQueue();
    }
    expect(await recordCheck(app)).toBe('operational');
    expect((await status()).components.queue).toMatchObject({ ok: true, lag_ms: 0 });
  });

  it('a failed database round trip is a check that is down', async () => {
    expect(await recordCheck(withFailingRoundTrip())).toBe('down');
    expect(await lastRow()).toMatchObject({ ok: false, status: 'down', database_ok: false, detail: expect.stringMatching(/connection refused/) });
    const body = await status();
    expect(body.recent_checks[0]).toMatchObject({ ok: false, status: 'down', components: { database: { ok: false } } });
    expect(JSON.stringify(body)).not.toContain('10.0.0.5');
    // The database answers this request: the current state is its own.
    expect(body.status).toBe('operational');
    expect(body.uptime_24h).toBe(0);
  });

  it('computes the 24 h uptime from the recorded checks, not older ones', async () => {
    for (let i = 0; i < 3; i++) expect(await recordCheck(app)).toBe('operational');
    expect(await recordCheck(withBrokenBlobs())).toBe('degraded');
    // Failed checks from before the window do not count.
    await app.db.query(
      `insert into status_checks (checked_at, ok, status, latency_ms, database_ok) values (now() - interval '25 hours', false, 'down', 1, false), (now() - interval '3 days', false, 'down', 1, false)`,
    );
    const body = await status();
    expect(body.uptime_24h).toBe(75);
    expect(body.recent_checks).toHaveLength(6);
    expect(body.recent_checks.map((c: { ok: boolean }) => c.ok)).toEqual([false, true, true, true, false, false]);
    const times = body.recent_checks.map((c: { checked_at: string }) => Date.parse(c.checked_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('has no uptime before the first check', async () => {
    const body = await status();
    expect(body.uptime_24h).toBeNull();
    expect(body.recent_checks).toEqual([]);
    expect(body.components.blobs).toBeNull();
  });

  it(`the status_check task records a check and prunes those older than ${KEEP_CHECKS_DAYS} days`, async () => {
    await app.db.query(
      `insert into status_checks (checked_at, ok, status, latency_ms, database_ok) values
         (now() - make_interval(days => $1::int, hours => 1), true, 'operational', 1, true),
         (now() - make_interval(days => $1::int - 1), true, 'operational', 1, true)`,
      [KEEP_CHECKS_DAYS],
    );
    const task = tasks.find((t) => t.name === 'status_check')!;
    await task.run(app, {}, { attempt: 1, maxAttempts: 3 });
    const rows = await app.db.query<{ age_days: number }>(
      `select extract(day from now() - checked_at)::int as age_days from status_checks order by checked_at`,
    );
    expect(rows.map((r) => r.age_days)).toEqual([KEEP_CHECKS_DAYS - 1, 0]);
  });

  it('shows no tenant data', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const secret = `zebra-${randomBytes(6).toString('hex')}`;
    expect((await t.api('POST', '/v1/memory/collections/private-notes/memories', { text: `The vault code is ${secret}` })).status).toBe(201);
    await recordCheck(app);
    const body = await status();
    const text = JSON.stringify(body);
    for (const value of [t.id, t.name, t.key, secret, 'private-notes', '@test.local']) expect(text).not.toContain(value);
    expect(Object.keys(body).sort()).toEqual(['checked_at', 'components', 'database_latency_ms', 'recent_checks', 'status', 'uptime_24h']);
    expect(Object.keys(body.recent_checks[0]).sort()).toEqual(['checked_at', 'components', 'latency_ms', 'ok', 'status']);
  });
});

describe('the hourly access_sweep', () => {
  it('drops Stripe event ids older than 30 days and keeps the recent ones', async () => {
    const old = `evt_old_${randomBytes(4).toString('hex')}`;
    const recent = `evt_new_${randomBytes(4).toString('hex')}`;
    await app.db.query(
      `insert into stripe_events (id, type, received_at) values ($1, 'checkout.session.completed', now() - interval '31 days'), ($2, 'checkout.session.completed', now() - interval '29 days')`,
      [old, recent],
    );
    const task = tasks.find((t) => t.name === 'access_sweep')!;
    await task.run(app, {}, { attempt: 1, maxAttempts: 3 });
    const ids = (await app.db.query<{ id: string }>('select id from stripe_events where id = any($1::text[])', [[old, recent]])).map((r) => r.id);
    expect(ids).toEqual([recent]);
  });
});

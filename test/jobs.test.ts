import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/core/context.ts';
import { defineJob, type TaskDef } from '../src/ports/jobs/jobs.ts';
import { startServer, type TestServer } from './support/server.ts';

/** The job queue of whichever database the suite runs on: graphile-worker or the embedded runner. */
describe('job queue', () => {
  let server: TestServer;
  const seen: Array<{ n: number; attempt: number }> = [];
  const flaky: TaskDef = {
    name: 'test_flaky',
    payload: z.object({ n: z.number() }),
    async run(_app: App, payload: { n: number }, meta) {
      seen.push({ n: payload.n, attempt: meta.attempt });
      if (meta.attempt < 2) throw new Error('first try fails');
    },
  };

  beforeAll(async () => {
    server = await startServer({}, { worker: false });
    server.app.log = pino({ level: 'silent' });
    await server.app.jobs.start(server.app, [flaky], []);
  });
  afterAll(() => server.close());

  it('runs a job enqueued in a committed transaction, retrying a failure with backoff', async () => {
    await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, flaky, { n: 1 }));
    await expect.poll(() => seen.filter((s) => s.n === 1).map((s) => s.attempt), { timeout: 20_000, interval: 200 }).toEqual([1, 2]);
  });

  it('does not run a job whose transaction rolled back', async () => {
    await server.app.db
      .transaction(async (tx) => {
        await server.app.jobs.enqueue(tx, flaky, { n: 2 });
        throw new Error('roll back');
      })
      .catch(() => {});
    await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, flaky, { n: 3 }));
    await expect.poll(() => seen.some((s) => s.n === 3), { timeout: 20_000, interval: 200 }).toBe(true);
    expect(seen.some((s) => s.n === 2)).toBe(false);
  });

  it("checks the payload against the job's schema when it is enqueued, at compile time and at run time", async () => {
    const numbered = defineJob('test_numbered', z.object({ n: z.number() }));
    const enqueue = () =>
      server.app.db.transaction((tx) =>
        // @ts-expect-error: the payload type comes from the job, so this call does not compile
        server.app.jobs.enqueue(tx, numbered, { n: 'four' }),
      );
    await expect(enqueue()).rejects.toThrow(/expected number/);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('job queue on PostgreSQL', () => {
  it('gives back a try that found a database unreachable, and runs the job again later', async () => {
    const server = await startServer({}, { worker: false });
    server.app.log = pino({ level: 'silent' });
    let tries = 0;
    // One try only: without the try given back, the first failure would be the job's last.
    const unreachable: TaskDef & { maxAttempts: number } = {
      name: 'test_unreachable',
      payload: z.object({}),
      maxAttempts: 1,
      async run() {
        tries++;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
      },
    };
    await server.app.jobs.start(server.app, [unreachable], []);
    try {
      await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, unreachable, {}));
      const job = () =>
        server.app.db.query<{ attempts: number; max_attempts: number; later: boolean; last_error: string | null; locked: boolean }>(
          `select attempts, max_attempts, run_at > now() + interval '20 seconds' as later, last_error, locked_at is not null as locked
             from graphile_worker._private_jobs where task_id = (select id from graphile_worker._private_tasks where identifier = 'test_unreachable')`,
        );
      await expect.poll(async () => (await job())[0]?.last_error ?? null, { timeout: 20_000, interval: 200 }).toMatch(/ECONNREFUSED/);
      expect(tries).toBe(1);
      expect(await job()).toEqual([{ attempts: 0, max_attempts: 1, later: true, last_error: expect.any(String), locked: false }]);
    } finally {
      await server.close();
    }
  });

  it('closes every connection before stop() returns, so dropping the database right after cannot kill the process', async () => {
    const server = await startServer();
    const { db } = (await server.app.db.query<{ db: string }>('select current_database() as db'))[0]!;
    await server.app.jobs.stop();
    // A connection still open when the server closes it (the tests' drop database ... with
    // (force), a restart) must not be an unhandled error: graphile-worker ended the pool it made
    // itself without waiting, after taking its error handler off, and one CI run died of it.
    // The queue's connections (node-postgres: no application_name) are gone; the app's own
    // (postgres.js names itself) are not the queue's to close. A backend leaves pg_stat_activity
    // a moment after its client hangs up, so this polls for a short while; a pool left open keeps
    // its idle connections for 10 s, far longer.
    const names = async () =>
      (await server.app.db.query<{ name: string }>('select distinct application_name as name from pg_stat_activity where datname = $1 order by 1', [db])).map(
        (r) => r.name,
      );
    await expect.poll(names, { timeout: 3_000, interval: 100 }).toEqual(['postgres.js']);
    await server.close();
  });
});

import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/context.ts';
import type { TaskDef } from '../src/ports/jobs/jobs.ts';
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
    await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, 'test_flaky', { n: 1 }));
    await expect.poll(() => seen.filter((s) => s.n === 1).map((s) => s.attempt), { timeout: 20_000, interval: 200 }).toEqual([1, 2]);
  });

  it('does not run a job whose transaction rolled back', async () => {
    await server.app.db
      .transaction(async (tx) => {
        await server.app.jobs.enqueue(tx, 'test_flaky', { n: 2 });
        throw new Error('roll back');
      })
      .catch(() => {});
    await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, 'test_flaky', { n: 3 }));
    await expect.poll(() => seen.some((s) => s.n === 3), { timeout: 20_000, interval: 200 }).toBe(true);
    expect(seen.some((s) => s.n === 2)).toBe(false);
  });
});

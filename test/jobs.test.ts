import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/core/context.ts';
import { defineJob, type TaskDef } from '../src/ports/jobs/jobs.ts';
import { capOf, PLACE_SECONDS, shareFlags, type Lane } from '../src/ports/jobs/shares.ts';
import { graphFillJob } from '../src/services/memory/graph-tenants.ts';
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

/** A task that records what runs and waits for `gate` before it ends. */
function gatedTask(name: string, lane?: Lane) {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const order: string[] = [];
  const task: TaskDef = {
    ...defineJob(name, z.object({ tenant_id: z.string(), n: z.number(), wait: z.boolean().default(true) }), { lane }),
    async run(_app: App, { tenant_id, n, wait }: { tenant_id: string; n: number; wait: boolean }) {
      order.push(`${tenant_id}${n}`);
      running.set(tenant_id, (running.get(tenant_id) ?? 0) + 1);
      most.set(tenant_id, Math.max(most.get(tenant_id) ?? 0, running.get(tenant_id)!));
      try {
        if (wait) await gate;
      } finally {
        running.set(tenant_id, running.get(tenant_id)! - 1);
      }
    },
  };
  return { task, open, running, most, order };
}

describe('how the workers are shared (shares.ts)', () => {
  it("one tenant's jobs hold all but one of 4 workers, a lane's at most its share, and another tenant's job runs meanwhile", { timeout: 180_000 }, async () => {
    const server = await startServer({ ORGMEM_WORKER_CONCURRENCY: '4' }, { worker: false });
    server.app.log = pino({ level: 'silent' });
    const plain = gatedTask('test_plain');
    const llm = gatedTask('test_llm', 'llm');
    try {
      await server.app.jobs.start(server.app, [plain.task, llm.task], []);
      for (let n = 0; n < 10; n++) await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, llm.task, { tenant_id: 'c', n }));
      await expect.poll(() => llm.running.get('c'), { timeout: 20_000, interval: 100 }).toBe(capOf('tenant-lane:c:llm', 4));
      for (let n = 0; n < 10; n++) await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, plain.task, { tenant_id: 'a', n }));
      await expect.poll(() => plain.running.get('a'), { timeout: 20_000, interval: 100 }).toBe(4 - capOf('tenant-lane:c:llm', 4));
      // Every worker is busy now; the first to free up takes the other tenant's job, not a 4th of a's.
      await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, plain.task, { tenant_id: 'b', n: 0, wait: false }));
      llm.open();
      await expect.poll(() => plain.order.includes('b0') && llm.order.length === 10, { timeout: 20_000, interval: 100 }).toBe(true);
      await expect.poll(() => plain.running.get('a'), { timeout: 20_000, interval: 100 }).toBe(capOf('tenant:a', 4));
      // A worker stays free with 6 of a's jobs waiting: a moment for a 4th take, had the cap let one through.
      await new Promise((r) => setTimeout(r, 1000));
      expect(plain.most.get('a')).toBe(capOf('tenant:a', 4));
      expect(llm.most.get('c')).toBe(capOf('tenant-lane:c:llm', 4));
      expect(capOf('tenant:a', 4)).toBe(3);
      expect(capOf('tenant-lane:c:llm', 4)).toBe(1);
    } finally {
      plain.open();
      llm.open();
      await server.close();
    }
  });

  it("runs one of a tenant's graph fills at a time: one queued again while one runs waits for it", () => {
    const flags = shareFlags('t', graphFillJob.lane);
    expect(flags).toContain('tenant-lane:t:graph');
    expect(capOf('tenant-lane:t:graph', 4)).toBe(1);
  });

  it("takes one job of each tenant in turn, and moves a tenant's backlog up once it has shrunk", { timeout: 180_000 }, async () => {
    const server = await startServer({ ORGMEM_WORKER_CONCURRENCY: '1' }, { worker: false });
    server.app.log = pino({ level: 'silent' });
    const turns = gatedTask('test_turns');
    const rebalanced = gatedTask('test_rebalanced');
    try {
      // Due times a millisecond apart in the order queued: the order then follows the places, however long each enqueue takes.
      let queued = Date.now() - 60_000;
      const enqueue = (task: TaskDef, tenant_id: string, n: number, wait = false) =>
        server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, task, { tenant_id, n, wait }, { runAt: new Date(++queued) }));
      for (let n = 0; n < 5; n++) await enqueue(turns.task, 'a', n);
      for (let n = 0; n < 2; n++) await enqueue(turns.task, 'b', n);
      // The first waiting job of each tenant, then the second of each, then the rest.
      await server.app.jobs.start(server.app, [turns.task, rebalanced.task], []);
      await expect.poll(() => turns.order.length, { timeout: 20_000, interval: 100 }).toBe(7);
      expect(turns.order).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'a3', 'a4']);

      // c's jobs are queued behind x's at places 0 to 4; once c0 runs, the 4 others wait at 1 to 4 until moved up.
      await enqueue(turns.task, 'x', 0, true);
      await expect.poll(() => turns.order.at(-1), { timeout: 20_000, interval: 100 }).toBe('x0');
      await enqueue(rebalanced.task, 'c', 0, true);
      for (let n = 1; n < 5; n++) await enqueue(rebalanced.task, 'c', n);
      turns.open();
      await expect.poll(() => rebalanced.order, { timeout: 20_000, interval: 100 }).toEqual(['c0']);
      expect(await server.app.jobs.rebalance()).toBe(4);
      expect(await server.app.jobs.rebalance()).toBe(0);
      await enqueue(rebalanced.task, 'd', 0);
      rebalanced.open();
      await expect.poll(() => rebalanced.order.length, { timeout: 20_000, interval: 100 }).toBe(6);
      expect(rebalanced.order).toEqual(['c0', 'c1', 'd0', 'c2', 'c3', 'c4']);
    } finally {
      turns.open();
      rebalanced.open();
      await server.close();
    }
  });
});

describe.runIf(!process.env.TEST_DATABASE_URL)('the embedded runner', () => {
  it("ages a job's place: one queued 10 s ago at place 3 goes before a newcomer at place 0", { timeout: 180_000 }, async () => {
    const server = await startServer({ ORGMEM_WORKER_CONCURRENCY: '1' }, { worker: false });
    server.app.log = pino({ level: 'silent' });
    const aged = gatedTask('test_aged');
    try {
      const enqueue = (tenant_id: string, n: number, runAt: Date) =>
        server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, aged.task, { tenant_id, n, wait: false }, { runAt }));
      const now = Date.now();
      for (let n = 0; n < 4; n++) await enqueue('e', n, new Date(now - 10_000));
      await enqueue('f', 0, new Date(now));
      await server.app.jobs.start(server.app, [aged.task], []);
      await expect.poll(() => aged.order.length, { timeout: 20_000, interval: 100 }).toBe(5);
      // By place alone f0 would be second; aged by PLACE_SECONDS, e3 is due 7 s before it.
      expect(PLACE_SECONDS * 3).toBeLessThan(10);
      expect(aged.order).toEqual(['e0', 'e1', 'e2', 'e3', 'f0']);
    } finally {
      aged.open();
      await server.close();
    }
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

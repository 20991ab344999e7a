import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { migrate } from '../src/maintenance/migrate.ts';
import { openPglite } from '../src/ports/db/pglite.ts';
import { embeddedQueue } from '../src/ports/jobs/embedded.ts';
import { ABANDONED, type TaskDef } from '../src/ports/jobs/jobs.ts';
import { extractBySentence, playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant } from './support/client.ts';
import { col } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

const bin = join(import.meta.dirname, '..', 'bin', 'orgmem.js');

describe('embedded runner after a crash', () => {
  it('runs again at once a job the dead process had taken, as its next try', async () => {
    const db = await openPglite('memory://');
    await migrate(db, 8, { storage: 'vector' });
    // What a process killed mid-job leaves: the job taken (locked, its first try counted), never finished.
    await db.query(`insert into jobs (task, payload, attempts, locked_at) values ('test_interrupted', '{}'::jsonb, 1, now())`);
    const tries: number[] = [];
    const interrupted: TaskDef = { name: 'test_interrupted', payload: z.object({}), run: async (_ctx, _payload, meta) => void tries.push(meta.attempt) };
    const queue = embeddedQueue(db, 1, pino({ level: 'silent' }));
    await queue.start(null, [interrupted], []);
    try {
      await expect.poll(() => tries, { timeout: 5_000, interval: 100 }).toEqual([2]);
    } finally {
      await queue.stop();
      await db.close();
    }
  });
});

describe('a job whose last try a crash cut short', () => {
  it('is settled as failed by its task, never run again, and kept failed in the queue', async () => {
    const server = await startServer({ ORGMEM_WORKER_HEARTBEAT_SECONDS: '1' }, { worker: false });
    const { app } = server;
    app.log = pino({ level: 'silent' });
    const ran: unknown[] = [];
    const settled: Array<{ n: number; reason: string }> = [];
    const lastTry: TaskDef = {
      name: 'test_last_try',
      payload: z.object({ n: z.number() }),
      maxAttempts: 1,
      run: async (_ctx, payload) => void ran.push(payload),
      abandon: async (_ctx, payload: { n: number }, reason) => void settled.push({ n: payload.n, reason }),
    };
    try {
      // What a worker killed on the job's only try leaves: taken by a worker that beats no more.
      await app.db.transaction((tx) => app.jobs.enqueue(tx, lastTry, { n: 7 }));
      const failed =
        app.db.kind === 'pglite'
          ? async () => {
              await app.db.query(`update jobs set attempts = 1, locked_at = now() where task = 'test_last_try'`);
              return async () => app.db.query<{ error: string }>(`select last_error as error from jobs where task = 'test_last_try' and run_at = 'infinity'`);
            }
          : async () => {
              await app.db.query(
                `update graphile_worker._private_jobs set attempts = 1, locked_by = 'pool-gone', locked_at = now() - interval '1 hour'
                  where task_id = (select id from graphile_worker._private_tasks where identifier = 'test_last_try')`,
              );
              return async () =>
                app.db.query<{ error: string }>(
                  `select last_error as error from graphile_worker.jobs where task_identifier = 'test_last_try' and locked_by is null and attempts >= max_attempts`,
                );
            };
      const queueRow = await failed();
      await app.jobs.start(app, [lastTry], []);
      await expect.poll(() => settled, { timeout: 15_000, interval: 100 }).toEqual([{ n: 7, reason: ABANDONED }]);
      await expect.poll(queueRow, { timeout: 5_000, interval: 100 }).toEqual([{ error: ABANDONED }]);
      // A poll or two later it is still not run: the queue keeps it as a failed job.
      await new Promise((r) => setTimeout(r, 500));
      expect(ran).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('a worker process killed mid-job (PostgreSQL)', () => {
  let fake: FakeLlm;
  let server: TestServer;
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-crash-'));
  const workers: ChildProcess[] = [];
  const env = { ORGMEM_EMBEDDER: 'hash' };

  beforeAll(async () => {
    fake = await startFakeLlm();
    playMemoryModel(fake);
    // Slow extractions, so the worker is killed while jobs are running.
    fake.on('extract_facts', (call) => ({ ...extractBySentence(call), delayMs: 3_000 }));
    server = await startServer({ ...env, ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' }, { worker: false });
  });
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await server?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `orgmem worker` as its own process on the server's database, beating every second. */
  const startWorkerProcess = () => {
    const child = spawn(process.execPath, [bin, 'worker'], {
      env: {
        ...process.env,
        ...env,
        DATABASE_URL: server.app.config.databaseUrl,
        ORGMEM_DATA_DIR: dir,
        ORGMEM_LLM_BASE_URL: fake.url,
        ORGMEM_LLM_MODEL: 'fake-model',
        ORGMEM_WORKER_HEARTBEAT_SECONDS: '1',
        ORGMEM_LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    workers.push(child);
    return child;
  };

  it('has its jobs run again by another worker, each exactly once', { timeout: 120_000 }, async () => {
    const t = await newTenant(server.url, server.adminKey);
    const texts = Array.from({ length: 6 }, (_, i) => `Person ${i} likes colour number ${i}.`);
    const jobIds: string[] = [];
    for (const content of texts) {
      const res = await t.api('POST', `${col('crash')}/remember`, { content });
      expect(res.status).toBe(202);
      jobIds.push(res.body.job_id);
    }
    const jobs = async () => Promise.all(jobIds.map(async (id) => (await t.api('GET', `/v1/memory/extract/job/${id}`)).body));

    const first = startWorkerProcess();
    await expect.poll(async () => (await jobs()).some((j) => j.state === 'processing'), { timeout: 30_000, interval: 100 }).toBe(true);
    const exited = new Promise((r) => first.once('exit', r));
    first.kill('SIGKILL');
    await exited;
    // The dead worker's jobs still read `processing`: only their retry can make that true again.
    const interrupted = (await jobs()).flatMap((j, i) => (j.state === 'processing' ? [i] : []));
    expect(interrupted.length).toBeGreaterThan(0);

    startWorkerProcess();
    await expect.poll(async () => (await jobs()).map((j) => j.state), { timeout: 90_000, interval: 500 }).toEqual(texts.map(() => 'done'));

    const done = await jobs();
    for (const i of interrupted) expect(done[i].attempts).toBe(2);
    const all = (await t.api('GET', `${col('crash')}/memories?include_archived=true&limit=200`)).body as Array<{
      text: string;
      archived: boolean;
      source: string;
    }>;
    for (const [i, job] of done.entries()) {
      expect(job.facts).toEqual([expect.objectContaining({ text: texts[i], relation: 'new' })]);
      // The fact once, and the raw text once (archived): nothing written twice by the retry.
      expect(
        all
          .filter((m) => m.text === texts[i] && m.source === 'remember')
          .map((m) => m.archived)
          .sort(),
      ).toEqual([false, true]);
    }
  });
});

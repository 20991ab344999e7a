import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crontab, tasks } from '../host/tasks.ts';
import { ANALYZE_DELAY_MS, BULK_ROWS, analyzeStaleTables, staleTables } from '../src/services/memory/table-stats.ts';
import { analyzeJob } from '../src/services/memory/table-stats.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * Planner statistics kept fresh by the service (services/memory/table-stats.ts), on whichever
 * database the suite runs: PostgreSQL's pg_stat_user_tables, which PGlite keeps too.
 */
const onPostgres = !!process.env.TEST_DATABASE_URL;

const items = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ text: `${tag} note number ${i} about the quarterly plan`, container_tag: `${tag}-${i % 7}` }));

describe('automatic ANALYZE after bulk writes', () => {
  let server: TestServer;
  let t: Tenant;

  // The waiting analyze jobs, from the queue's own table.
  const waiting = async () =>
    onPostgres
      ? server.app.db.query<{ run_at: Date }>(
          `select j.run_at from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
            where k.identifier = 'analyze_tables' and j.locked_at is null`,
        )
      : server.app.db.query<{ run_at: Date }>(`select run_at from jobs where task = 'analyze_tables' and locked_at is null`);

  const clearWaiting = () =>
    onPostgres
      ? server.app.db.query(`select graphile_worker.remove_job('analyze_tables')`)
      : server.app.db.query(`delete from jobs where task = 'analyze_tables' and locked_at is null`);

  // A backend hands its counts to the shared statistics at most once a second, and an idle one
  // up to 10 s later on PostgreSQL: callers poll.
  const memoryStats = async () => {
    const [row] = await server.app.db.query<{ modified: number; analyzes: number; reltuples: number }>(
      `select s.n_mod_since_analyze::int as modified, s.analyze_count::int as analyzes, c.reltuples::float8 as reltuples
         from pg_stat_user_tables s join pg_class c on c.oid = s.relid where s.relname = 'memories' and s.schemaname = current_schema()`,
    );
    return row!;
  };

  // No worker: the test runs the job itself, so nothing analyzes behind its back.
  beforeAll(async () => {
    server = await startServer({}, { worker: false });
    t = await newTenant(server.url, server.adminKey);
  });
  afterAll(() => server?.close());

  it('is a task of the worker, also run every minute from the crontab', () => {
    expect(tasks.map((x) => x.name)).toContain('analyze_tables');
    expect(crontab).toContainEqual({ task: 'analyze_tables', match: '* * * * *' });
  });

  it('a small write queues nothing', async () => {
    const res = await t.api('POST', '/v1/memory/collections/small/memories/bulk', items(BULK_ROWS - 1, 'small'));
    expect(res.status).toBe(201);
    const one = await t.api('POST', '/v1/memory/collections/small/memories', { text: 'a single memory' });
    expect(one.status).toBe(201);
    expect(await waiting()).toEqual([]);
  });

  it('a bulk write queues one check a few seconds later, and a second one close behind shares it', async () => {
    const before = Date.now();
    for (const tag of ['first', 'second']) {
      const res = await t.api('POST', '/v1/memory/collections/big/memories/bulk', items(100, tag));
      expect(res.status).toBe(201);
    }
    const jobs = await waiting();
    expect(jobs).toHaveLength(1);
    const delay = new Date(jobs[0]!.run_at).getTime() - before;
    expect(delay).toBeGreaterThan(ANALYZE_DELAY_MS - 2_000);
    expect(delay).toBeLessThan(ANALYZE_DELAY_MS + 5_000);
  });

  it('the check analyzes a table changed past the threshold, and then finds nothing to do', async () => {
    await expect.poll(async () => (await memoryStats()).modified, { timeout: 15_000, interval: 250 }).toBeGreaterThanOrEqual(249);
    const before = await memoryStats();
    expect((await staleTables(server.app.db)).map((s) => s.table)).toContain('memories');
    await clearWaiting();
    expect(await analyzeStaleTables(server.app)).toContain('memories');
    // Its first run in this process looks once more a little later (writes may still be coming).
    const [again] = await waiting();
    expect(new Date(again!.run_at).getTime()).toBeGreaterThan(Date.now() + ANALYZE_DELAY_MS - 3_000);
    await clearWaiting();
    const after = await memoryStats();
    expect(after.analyzes).toBe(before.analyzes + 1);
    // What the planner goes by: the table's size as ANALYZE counted it.
    expect(after.modified).toBe(0);
    expect(after.reltuples).toBeGreaterThanOrEqual(249);
    expect(await analyzeStaleTables(server.app)).not.toContain('memories');
  });

  it('a table changed by less than 50 rows + 10% is left alone', async () => {
    const res = await t.api('POST', '/v1/memory/collections/big/memories/bulk', items(20, 'third'));
    expect(res.status).toBe(201);
    await expect.poll(async () => (await memoryStats()).modified, { timeout: 15_000, interval: 250 }).toBe(20);
    const before = await memoryStats();
    expect(await analyzeStaleTables(server.app)).not.toContain('memories');
    expect((await memoryStats()).analyzes).toBe(before.analyzes);
  });

  it('queues itself again while writes keep coming, and stops once they stop', async () => {
    await analyzeStaleTables(server.app);
    await clearWaiting();
    const res = await t.api('POST', '/v1/memory/collections/big/memories/bulk', items(100, 'fourth'));
    expect(res.status).toBe(201);
    await clearWaiting();
    await expect.poll(async () => (await memoryStats()).modified, { timeout: 15_000, interval: 250 }).toBe(120);
    await analyzeStaleTables(server.app);
    const [job] = await waiting();
    expect(new Date(job!.run_at).getTime()).toBeGreaterThan(Date.now() + ANALYZE_DELAY_MS - 3_000);
    await clearWaiting();
    await analyzeStaleTables(server.app);
    expect(await waiting()).toEqual([]);
  });
});

describe('with ORGMEM_AUTO_ANALYZE=0', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_AUTO_ANALYZE: '0' }, { worker: false });
  });
  afterAll(() => server?.close());

  it('bulk writes queue nothing and the job analyzes nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await t.api('POST', '/v1/memory/collections/big/memories/bulk', items(100, 'off'));
    expect(res.status).toBe(201);
    const { n } = (
      onPostgres
        ? await server.app.db.query<{ n: number }>(
            `select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id where k.identifier = 'analyze_tables'`,
          )
        : await server.app.db.query<{ n: number }>(`select count(*)::int as n from jobs where task = 'analyze_tables'`)
    )[0]!;
    expect(n).toBe(0);
    expect(await analyzeStaleTables(server.app)).toEqual([]);
  });

  it('a keyed job keeps the run_at it was first queued with, on both queues (a throttle, not a debounce)', async () => {
    const first = new Date(Date.now() + 3_600_000);
    await server.app.db.transaction((tx) => server.app.jobs.enqueue(tx, analyzeJob, {}, { key: 'analyze_tables', runAt: first }));
    await server.app.db.transaction((tx) =>
      server.app.jobs.enqueue(tx, analyzeJob, {}, { key: 'analyze_tables', runAt: new Date(first.getTime() + 3_600_000) }),
    );
    const jobs = onPostgres
      ? await server.app.db.query<{ run_at: Date }>(
          `select j.run_at from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id where k.identifier = 'analyze_tables'`,
        )
      : await server.app.db.query<{ run_at: Date }>(`select run_at from jobs where task = 'analyze_tables'`);
    expect(jobs.map((j) => new Date(j.run_at).getTime())).toEqual([first.getTime()]);
  });
});

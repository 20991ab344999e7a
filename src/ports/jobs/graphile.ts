import { EventEmitter } from 'node:events';
import { parseCronItems, run, runMigrations, type Runner, type Task, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import type { Logger } from 'pino';
import { Logger as GraphileLogger } from 'graphile-worker';
import type { z } from 'zod';
import { isUnreachable } from '../db/db.ts';
import { abandonTask, checkCrontab, jobRecord, runTask, type JobQueue, type TaskDef } from './jobs.ts';
import { BACKLOG_BOUND, TakeTurn, WorkerShares } from './shares.ts';
import { watchWorkerLiveness } from './worker-liveness.ts';

/**
 * graphile-worker on PostgreSQL: LISTEN/NOTIFY wake-ups, retries with backoff, cron, and the jobs
 * of a crashed worker taken again within a few heartbeats (`heartbeatSeconds`). Its workers are
 * shared as shares.ts says: each job carries its share's flags, a job's priority is its tenant's
 * backlog, and each take skips the flags at their cap (graphile-worker's `forbiddenFlags`), one take
 * at a time.
 */
export async function graphileQueue<C>(connectionString: string, concurrency: number, heartbeatSeconds: number, log: Logger): Promise<JobQueue<C>> {
  const logger = new GraphileLogger(() => (level, message) => {
    if (level === 'error') log.error(message);
    else if (level === 'warning') log.warn(message);
    else log.debug(message);
  });
  // Our own pool, not one graphile-worker makes from the connection string: it ends that one
  // without waiting and takes its error handler off first, so a connection closed by the server
  // right after stop() (a dropped database, a restart) was an unhandled 'error' that killed the
  // process. This one keeps its handler and stop() waits for it to close.
  const pgPool = new pg.Pool({ connectionString, max: concurrency + 2 });
  const closed = (error: Error) => log.warn({ err: error }, 'job queue connection closed');
  pgPool.on('error', closed);
  pgPool.on('connect', (client) => client.on('error', closed));
  // The API enqueues through graphile_worker.add_job even when no worker runs in this process.
  await runMigrations({ pgPool, logger });
  // The backlog order counts a tenant's waiting jobs at each enqueue: an index of our own on
  // graphile-worker's table, made once under a lock since several processes start together.
  await pgPool.query(`select pg_advisory_lock(${BACKLOG_INDEX_LOCK})`);
  try {
    await pgPool.query(`create index if not exists orgmem_waiting_by_tenant on graphile_worker._private_jobs ((payload->>'tenant_id')) where is_available`);
  } finally {
    await pgPool.query(`select pg_advisory_unlock(${BACKLOG_INDEX_LOCK})`);
  }
  let runner: Runner | undefined;
  let liveness: { stop(): Promise<void> } | undefined;
  return {
    async enqueue(q, job, payload, opts = {}) {
      const { payload: checked, maxAttempts, tenant, flags } = jobRecord(job, payload);
      // preserve_run_at: a job waiting under the key keeps the run_at it was queued with, as the
      // embedded queue does (graphile-worker's default, replace, would move it with each call),
      // unless the caller asks to move it.
      await q.query(
        `select graphile_worker.add_job($1, $2::json, run_at => $3::timestamptz, max_attempts => $4, job_key => $5, job_key_mode => $6,
           priority => (select count(*)::int from (select 1 from graphile_worker._private_jobs j where j.payload->>'tenant_id' = $7 and j.is_available limit $9) b),
           flags => $8::text[])`,
        [job.name, checked, opts.runAt ?? null, maxAttempts, opts.key ?? null, opts.moveRunAt ? 'replace' : 'preserve_run_at', tenant, flags, BACKLOG_BOUND],
      );
    },
    async start(ctx, tasks, crontab) {
      checkCrontab(tasks, crontab);
      const shares = new WorkerShares(concurrency);
      const turn = new TakeTurn();
      const taskList: Record<string, Task> = {};
      for (const task of tasks) taskList[task.name] = graphileTask(ctx, task, log, pgPool, shares);
      // graphile-worker 0.17 locks jobs to the worker pool's id (`pool-<hex>`, random, one pool
      // per runner), not to its workers' ids, and tells that id only through this event.
      const poolIds = new Set<string>();
      const events: WorkerEvents = new EventEmitter();
      events.on('pool:create', ({ workerPool }) => poolIds.add(workerPool.id));
      // A take ends in exactly one of these: the job it took is counted before the next take.
      events.on('job:start', ({ job }) => {
        shares.started(flagsOf(job.flags));
        turn.done();
      });
      events.on('worker:getJob:empty', () => turn.done());
      events.on('worker:getJob:error', () => turn.done());
      runner = await run({
        pgPool,
        concurrency,
        taskList,
        parsedCronItems: parseCronItems(crontab.map((c) => ({ task: c.task, match: c.match }))),
        noHandleSignals: true,
        logger,
        pollInterval: 2000,
        events,
        forbiddenFlags: async () => {
          await turn.acquire();
          return shares.forbidden();
        },
      });
      liveness = await watchWorkerLiveness(
        pgPool,
        () => [...poolIds],
        heartbeatSeconds,
        (job) => abandonTask(ctx, tasks, job, log),
        logger,
        log,
      );
    },
    async lagMs() {
      // What a worker could take now (graphile-worker's own get_job condition): available (not
      // locked, tries left), due, and not behind a named queue that another job holds.
      const { rows } = await pgPool.query<{ lag_ms: number | null }>(
        `select (extract(epoch from now() - min(j.run_at)) * 1000)::float8 as lag_ms
           from graphile_worker._private_jobs j
          where j.is_available and j.run_at <= now()
            and (j.job_queue_id is null or exists (select 1 from graphile_worker._private_job_queues q where q.id = j.job_queue_id and q.is_available))`,
      );
      return Math.max(0, rows[0]?.lag_ms ?? 0);
    },
    async rebalance() {
      const { rowCount } = await pgPool.query(
        `update graphile_worker._private_jobs j set priority = j.priority - m.head
           from (select payload->>'tenant_id' as tenant, min(priority) as head from graphile_worker._private_jobs
                  where is_available and payload->>'tenant_id' is not null group by 1 having min(priority) > 0) m
          where j.payload->>'tenant_id' = m.tenant and j.is_available`,
      );
      return rowCount ?? 0;
    },
    async dropSettled(days) {
      // Out of tries and not taken: graphile-worker's permanently failed jobs, kept until dropped.
      const { rowCount } = await pgPool.query(
        `delete from graphile_worker._private_jobs where locked_at is null and attempts >= max_attempts and created_at < now() - make_interval(days => $1)`,
        [days],
      );
      return rowCount ?? 0;
    },
    async stop() {
      await runner?.stop();
      await liveness?.stop();
      liveness = undefined;
      runner = undefined;
      if (!pgPool.ended) await pgPool.end();
    },
  };
}

/** How long a job whose try found a database unreachable waits before its next one. */
export const UNREACHABLE_RETRY_SECONDS = 30;

/**
 * A try that failed because a database could not be reached did none of the job's work: its try
 * is given back and the next one waits UNREACHABLE_RETRY_SECONDS (graphile-worker adds its own
 * backoff). On Citus the queue lives on the coordinator while a tenant's rows are on a worker: a
 * worker down for longer than the tries' backoff (seconds) would otherwise use the tries up, and
 * the last one could not even record the job's failure on the tenant's node, leaving it
 * unsettled (docs/citus.md, "A node down"). Only for a day after the job was queued, so a
 * database gone for good (a tenant's own, dropped) does not keep a job retrying forever.
 */
function graphileTask<C>(ctx: C, task: TaskDef<z.ZodType, C>, log: Logger, pool: pg.Pool, shares: WorkerShares): Task {
  return async (raw, helpers) => {
    try {
      await runTask(ctx, task, raw, { attempt: helpers.job.attempts, maxAttempts: helpers.job.max_attempts }, log);
    } catch (err) {
      if (isUnreachable(err)) {
        await pool
          .query(
            `update graphile_worker._private_jobs set attempts = attempts - 1, run_at = now() + $2 * interval '1 second'
              where id = $1 and created_at > now() - interval '1 day'`,
            [helpers.job.id, UNREACHABLE_RETRY_SECONDS],
          )
          .catch((e: unknown) => log.warn({ err: e, task: task.name }, 'a try that found a database unreachable could not be given back'));
      }
      throw err;
    } finally {
      shares.finished(flagsOf(helpers.job.flags));
    }
  };
}

// Any constant works; it only has to be the same for every orgmem process.
const BACKLOG_INDEX_LOCK = 7_211_947;

/** graphile-worker keeps a job's flags as a JSON object whose keys are the flags. */
const flagsOf = (flags: Record<string, true> | null): string[] => Object.keys(flags ?? {});

import { parseCronItems } from 'graphile-worker';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Db, Queryable } from '../db/db.ts';
import { ABANDONED, abandonTask, backoffSeconds, checkCrontab, jobRecord, runTask, type JobQueue, type TaskDef } from './jobs.ts';
import { BACKLOG_BOUND, PLACE_SECONDS, WorkerShares } from './shares.ts';

const POLL_MS = 200;

interface JobRow {
  id: number;
  task: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  flags: string[];
}

/**
 * The embedded mode's job runner: graphile-worker cannot run over PGlite (one shared session,
 * no cross-connection LISTEN), so this polls the `jobs` table in-process with the same task
 * definitions, the same retry curve, the same cron patterns and the same shares of its workers
 * (shares.ts: a job's priority is its tenant's backlog, aged by PLACE_SECONDS, and a take skips the
 * flags at their cap).
 */
export function embeddedQueue<C>(db: Db, concurrency: number, log: Logger): JobQueue<C> {
  let timers: NodeJS.Timeout[] = [];
  let running = 0;
  let stopped = true;
  const inFlight = new Set<Promise<void>>();

  // A job with a key that is already waiting is not added again (graphile-worker's job_key).
  const add = (
    q: Queryable,
    task: string,
    payload: unknown,
    runAt: Date | null,
    maxAttempts: number,
    { key = null, move = false, tenant = null, flags = [] }: { key?: string | null; move?: boolean; tenant?: string | null; flags?: string[] } = {},
  ) =>
    q.query(
      `insert into jobs (task, payload, run_at, max_attempts, job_key, flags, priority)
       values ($1, $2::jsonb, coalesce($3::timestamptz, now()), $4, $5, $7::text[],
               (select count(*)::int from (select 1 from jobs j where j.payload->>'tenant_id' = $8 and j.locked_at is null and j.run_at < 'infinity' limit $9) b))
       on conflict (job_key) where job_key is not null do update set run_at = case when $6 then excluded.run_at else jobs.run_at end`,
      [task, payload, runAt, maxAttempts, key, move, flags, tenant, BACKLOG_BOUND],
    );

  return {
    async enqueue(q, job, payload, opts = {}) {
      const { payload: checked, maxAttempts, tenant, flags } = jobRecord(job, payload);
      await add(q, job.name, checked, opts.runAt ?? null, maxAttempts, { key: opts.key ?? null, move: !!opts.moveRunAt, tenant, flags });
    },
    async start(ctx, tasks, crontab) {
      checkCrontab(tasks, crontab);
      // One process holds the embedded database, so a job still locked now was taken by a process
      // that died mid-run (kill -9, a crash): it is due again at once, its next try already counted.
      // One that was on its last try is settled as failed first, and kept like any failed job.
      const lastTries = await db.query<JobRow>('select id, task, payload from jobs where locked_at is not null and attempts >= max_attempts');
      for (const job of lastTries) await abandonTask(ctx, tasks, job, log);
      const orphans = await db.query(
        `update jobs set locked_at = null,
           run_at = case when attempts >= max_attempts then 'infinity'::timestamptz else run_at end,
           last_error = case when attempts >= max_attempts then $1 else last_error end
         where locked_at is not null returning id`,
        [ABANDONED],
      );
      if (orphans.length) log.warn({ jobs: orphans.length }, 'jobs interrupted by a crash are taken again (or settled, after their last try)');
      stopped = false;
      const byName = new Map(tasks.map((t) => [t.name, t]));
      const shares = new WorkerShares(concurrency);
      const poll = async () => {
        while (!stopped && running < concurrency) {
          const [job] = await db.query<JobRow>(
            // A job taken gives its key up: the same work may be queued again while it runs.
            `update jobs set locked_at = now(), attempts = attempts + 1, job_key = null
             where id = (select id from jobs where locked_at is null and run_at <= now() and not (flags && $1::text[])
                        order by run_at + make_interval(secs => priority * $2), id limit 1)
             returning id, task, payload, attempts, max_attempts, flags`,
            [shares.forbidden(), PLACE_SECONDS],
          );
          if (!job) return;
          running++;
          shares.started(job.flags);
          const p = execute(ctx, db, log, byName.get(job.task), job).finally(() => {
            running--;
            shares.finished(job.flags);
            inFlight.delete(p);
          });
          inFlight.add(p);
        }
      };
      const tick = () => {
        if (stopped) return;
        poll()
          .catch((err) => log.error({ err }, 'job poll failed'))
          .finally(() => {
            if (!stopped) timers.push(setTimeout(tick, POLL_MS));
          });
      };
      tick();
      const cron = parseCronItems(crontab.map((c) => ({ task: c.task, match: c.match })));
      const scheduleMinute = () => {
        const now = new Date();
        const wait = 60_000 - (now.getTime() % 60_000);
        timers.push(
          setTimeout(async () => {
            if (stopped) return;
            const at = new Date(Math.round(Date.now() / 60_000) * 60_000);
            const digest = { min: at.getUTCMinutes(), hour: at.getUTCHours(), date: at.getUTCDate(), month: at.getUTCMonth() + 1, dow: at.getUTCDay() };
            for (const item of cron) {
              if (item.match(digest)) {
                await add(db, item.task, { _cron: { ts: at.toISOString() } }, null, 3).catch((err) =>
                  log.error({ err, task: item.task }, 'cron enqueue failed'),
                );
              }
            }
            scheduleMinute();
          }, wait),
        );
      };
      scheduleMinute();
    },
    async lagMs() {
      // Settled failures wait at run_at 'infinity', never due; a taken job is locked.
      const [row] = await db.query<{ lag_ms: number | null }>(
        'select (extract(epoch from now() - min(run_at)) * 1000)::float8 as lag_ms from jobs where locked_at is null and run_at <= now()',
      );
      return Math.max(0, row?.lag_ms ?? 0);
    },
    async rebalance() {
      const moved = await db.query(
        `update jobs j set priority = j.priority - m.head
           from (select payload->>'tenant_id' as tenant, min(priority) as head from jobs
                  where locked_at is null and run_at < 'infinity' and payload->>'tenant_id' is not null group by 1 having min(priority) > 0) m
          where j.payload->>'tenant_id' = m.tenant and j.locked_at is null and j.run_at < 'infinity' returning j.id`,
      );
      return moved.length;
    },
    async dropSettled(days) {
      const dropped = await db.query(
        `delete from jobs where run_at = 'infinity' and locked_at is null and created_at < now() - make_interval(days => $1) returning id`,
        [days],
      );
      return dropped.length;
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers = [];
      await Promise.allSettled([...inFlight]);
    },
  };
}

async function execute<C>(ctx: C, db: Db, log: Logger, task: TaskDef<z.ZodType, C> | undefined, job: JobRow): Promise<void> {
  try {
    if (!task) throw new Error(`unknown task ${job.task}`);
    await runTask(ctx, task, job.payload, { attempt: job.attempts, maxAttempts: job.max_attempts }, log);
    await db.query('delete from jobs where id = $1', [job.id]);
  } catch (err) {
    const final = job.attempts >= job.max_attempts;
    log.warn({ err, task: job.task, attempt: job.attempts, final }, 'job failed');
    // A job out of tries is kept, never run again, like graphile-worker's permanently failed jobs.
    // One that cannot be settled (the database closed under it) stays locked: the next start takes it again.
    await db
      .query(
        `update jobs set locked_at = null, last_error = $2,
           run_at = case when $3 then 'infinity'::timestamptz else now() + make_interval(secs => $4) end
         where id = $1`,
        [job.id, String((err as Error)?.message ?? err), final, backoffSeconds(job.attempts)],
      )
      .catch((settle: unknown) => log.error({ err: settle, task: job.task }, 'a failed job could not be settled; the next start takes it again'));
  }
}

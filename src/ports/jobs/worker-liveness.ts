import { makeWorkerUtils, type Logger as GraphileLogger } from 'graphile-worker';
import type pg from 'pg';
import type { Logger } from 'pino';
import { ABANDONED } from './jobs.ts';

export interface AbandonedJob {
  task: string;
  payload: unknown;
}

/** Missed beats after which a worker counts as dead. */
const MISSED_BEATS = 3;

/**
 * Crash recovery for graphile-worker. A job taken by a worker stays locked to its id
 * (`locked_by`) until that worker finishes it, and graphile-worker frees a vanished worker's jobs
 * only after four hours: a `kill -9`ed process left its jobs `processing` that long. So every
 * `seconds` this process records a beat for each id it locks jobs with (`worker_heartbeats`,
 * sql/012) and releases, with graphile-worker's own `forceUnlockWorkers`, the jobs of every
 * worker that has not beaten for three beats; they are then taken again at once, as a new try.
 * It runs at start too, so a worker started after a crash recovers the dead one's jobs.
 *
 * A job is only released once it has been locked longer than the staleness window as well: a
 * worker that has just started may take a job before its first beat is written. A released job
 * that was on its last try would never run again, so `onAbandoned` settles it first (a crash
 * between the two steps only settles it twice) and the queue records it as failed.
 */
export async function watchWorkerLiveness(
  pgPool: pg.Pool,
  ownLockIds: () => string[],
  seconds: number,
  onAbandoned: (job: AbandonedJob) => Promise<void>,
  logger: GraphileLogger,
  log: Logger,
): Promise<{ stop(): Promise<void> }> {
  const utils = await makeWorkerUtils({ pgPool, logger });
  const staleSeconds = seconds * MISSED_BEATS;
  const beat = async () => {
    await pgPool.query(
      `insert into worker_heartbeats (worker_id, seen_at) select unnest($1::text[]), now()
       on conflict (worker_id) do update set seen_at = now()`,
      [ownLockIds()],
    );
    const { rows } = await pgPool.query<{ locked_by: string }>(
      `select locked_by from graphile_worker._private_jobs j
        where locked_by is not null and locked_at < now() - make_interval(secs => $1)
          and not exists (select 1 from worker_heartbeats h where h.worker_id = j.locked_by and h.seen_at >= now() - make_interval(secs => $1))
       union
       select locked_by from graphile_worker._private_job_queues q
        where locked_by is not null and locked_at < now() - make_interval(secs => $1)
          and not exists (select 1 from worker_heartbeats h where h.worker_id = q.locked_by and h.seen_at >= now() - make_interval(secs => $1))`,
      [staleSeconds],
    );
    if (rows.length) {
      const dead = rows.map((r) => r.locked_by);
      const { rows: lastTries } = await pgPool.query<AbandonedJob & { id: string }>(
        `select j.id::text, t.identifier as task, j.payload from graphile_worker._private_jobs j
           join graphile_worker._private_tasks t on t.id = j.task_id
          where j.locked_by = any($1::text[]) and j.attempts >= j.max_attempts`,
        [dead],
      );
      for (const job of lastTries) await onAbandoned(job);
      await utils.forceUnlockWorkers(dead);
      if (lastTries.length)
        await utils.permanentlyFailJobs(
          lastTries.map((j) => j.id),
          ABANDONED,
        );
      log.warn({ workers: dead }, 'released the jobs of workers that stopped beating');
    }
    // A dead worker's row is no longer needed: its remaining jobs are judged by their lock age.
    await pgPool.query('delete from worker_heartbeats where seen_at < now() - make_interval(secs => $1)', [staleSeconds]);
  };
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    current = beat()
      .catch((err) => log.error({ err }, 'worker heartbeat failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, seconds * 1000);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
      // A clean stop has finished or handed back its jobs; its beats would only linger.
      await pgPool
        .query('delete from worker_heartbeats where worker_id = any($1::text[])', [ownLockIds()])
        .catch((err) => log.warn({ err }, 'worker heartbeat cleanup failed'));
      await utils.release();
    },
  };
}

import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Queryable } from '../db/db.ts';
import { jobTenant, shareFlags, type Lane } from './shares.ts';

export interface JobMeta {
  /** 1 on the first try. */
  attempt: number;
  maxAttempts: number;
}

/**
 * A kind of background job: the task identifier the queue stores, the zod schema of its payload
 * and how often it is tried. Declared by the service that enqueues it; a task of `host/tasks.ts` adds
 * the code that runs it.
 */
export interface JobDef<S extends z.ZodType = z.ZodType> {
  name: string;
  payload: S;
  /** Tries before the job counts as failed; 3 when not given. */
  maxAttempts?: number;
  /** The kind of long work the job is (shares.ts), which bounds how many workers such jobs hold. */
  lane?: Lane;
}

export function defineJob<S extends z.ZodType>(name: string, payload: S, opts: { maxAttempts?: number; lane?: Lane } = {}): JobDef<S> {
  return { name, payload, ...opts };
}

/** A job kind and the code that runs it, given the worker's context `C` (the App). */
export interface TaskDef<S extends z.ZodType = z.ZodType, C = unknown> extends JobDef<S> {
  run(ctx: C, payload: z.output<S>, meta: JobMeta): Promise<void>;
  /**
   * Settles a job whose last try was cut short by a crash: the queue will not run it again, and
   * no code of the try ran to record the failure, so a task that shows its state to the tenant
   * records it here.
   */
  abandon?(ctx: C, payload: z.output<S>, reason: string): Promise<void>;
}

export function defineTask<S extends z.ZodType, C>(job: JobDef<S>, run: TaskDef<S, C>['run'], abandon?: TaskDef<S, C>['abandon']): TaskDef<S, C> {
  return { ...job, run, ...(abandon && { abandon }) };
}

/** What a job out of tries whose worker died shows as its error, in the queue and to the tenant. */
export const ABANDONED = 'The worker stopped during the last try (a crash or a kill); the job was not finished';

/** A job out of tries whose worker died: its task's `abandon`, with the same payload rule as a run. */
export async function abandonTask<C>(ctx: C, tasks: Array<TaskDef<z.ZodType, C>>, job: { task: string; payload: unknown }, log: Logger) {
  const task = tasks.find((t) => t.name === job.task);
  const payload = task?.payload.safeParse(job.payload);
  log.warn({ task: job.task }, 'a job interrupted on its last try is settled as failed');
  if (task?.abandon && payload?.success) await task.abandon(ctx, payload.data, ABANDONED);
}

export interface CronDef {
  /** The task's name. */
  task: string;
  /** Standard 5-field cron pattern, UTC. */
  match: string;
}

export interface EnqueueOptions {
  runAt?: Date;
  /**
   * A job with this key that is still waiting is not queued twice, and keeps the run_at it was
   * first queued with (a throttle: later calls do not postpone it). A job taken gives its key
   * up, so a call while it runs queues the next one.
   */
  key?: string;
  /** With `key`: a job still waiting under it is moved to this `runAt` (now, when unset) rather than kept as it was. */
  moveRunAt?: boolean;
}

export interface JobQueue<C = unknown> {
  /**
   * Adds a job in the caller's transaction, so it exists exactly when the write commits. The
   * payload's type follows from the job at compile time and is checked against its schema here
   * at run time: a bad payload is the caller's bug, thrown at once rather than stored as a job
   * that can never run.
   */
  enqueue<S extends z.ZodType>(q: Queryable, job: JobDef<S>, payload: z.input<S>, opts?: EnqueueOptions): Promise<void>;
  /**
   * Starts executing tasks and the crontab in this process; `ctx` is handed to every task. The
   * list holds tasks of every payload type, so their payload parameter is erased (`any`).
   */
  start(ctx: C, tasks: TaskDef<any, C>[], crontab: CronDef[]): Promise<void>;
  /**
   * How long, in ms, the oldest job that is due and not taken has waited (0 when none): a queue
   * that drains keeps it near the poll interval. Jobs waiting for a retry's backoff are not due.
   */
  lagMs(): Promise<number>;
  /**
   * Moves each tenant's waiting jobs up so that its first is at the head of the order again
   * (shares.ts, `BACKLOG_BOUND`): a backlog counted when it was long would otherwise keep a tenant
   * behind every newcomer once it has shrunk. Answers how many jobs moved.
   */
  rebalance(): Promise<number>;
  /** Drops the jobs out of tries that were queued more than `days` ago (their owners recorded the failure); answers how many. */
  dropSettled(days: number): Promise<number>;
  stop(): Promise<void>;
}

/** Seconds to wait before retry number `attempt` + 1; the same curve graphile-worker uses. */
export const backoffSeconds = (attempt: number) => Math.exp(Math.min(attempt, 10));

/**
 * What both queues store for a job: the payload as its schema parses it, its number of tries, its
 * tenant (for the backlog order) and the flags its share is counted by (shares.ts).
 */
export function jobRecord<S extends z.ZodType>(job: JobDef<S>, payload: z.input<S>) {
  const checked = job.payload.parse(payload) as unknown;
  const tenant = jobTenant(checked);
  return { payload: checked, maxAttempts: job.maxAttempts ?? 3, tenant, flags: shareFlags(tenant, job.lane) };
}

/** Every cron entry must name a task of the list; a typo would otherwise never run. */
export function checkCrontab(tasks: Array<{ name: string }>, crontab: CronDef[]): void {
  const unknown = crontab.find((c) => !tasks.some((t) => t.name === c.task));
  if (unknown) throw new Error(`The crontab names a task that does not exist: ${unknown.task}`);
}

/**
 * Runs one job with both queues' rule for payloads: one that fails its schema never becomes
 * valid, so it is logged and dropped instead of retried. A throw from the task is a failed try.
 */
export async function runTask<C>(ctx: C, task: TaskDef<z.ZodType, C>, raw: unknown, meta: JobMeta, log: Logger): Promise<void> {
  const payload = task.payload.safeParse(raw);
  if (!payload.success) {
    log.error({ task: task.name, issues: payload.error.issues }, 'invalid job payload dropped');
    return;
  }
  await task.run(ctx, payload.data, meta);
}

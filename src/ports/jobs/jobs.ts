import type { z } from 'zod';
import type { App } from '../../context.ts';
import type { Queryable } from '../db/db.ts';

export interface JobMeta {
  /** 1 on the first try. */
  attempt: number;
  maxAttempts: number;
}

/** A background task; the payload is checked with zod before `run` sees it. */
export interface TaskDef<S extends z.ZodType = z.ZodType> {
  name: string;
  payload: S;
  run(app: App, payload: z.output<S>, meta: JobMeta): Promise<void>;
}

export interface CronDef {
  task: string;
  /** Standard 5-field cron pattern, UTC. */
  match: string;
}

export interface EnqueueOptions {
  runAt?: Date;
  maxAttempts?: number;
}

export interface JobQueue {
  /** Adds a job in the caller's transaction, so it exists exactly when the write commits. */
  enqueue(q: Queryable, task: string, payload: unknown, opts?: EnqueueOptions): Promise<void>;
  /** Starts executing tasks and the crontab in this process. */
  start(app: App, tasks: TaskDef[], crontab: CronDef[]): Promise<void>;
  stop(): Promise<void>;
}

/** Seconds to wait before retry number `attempt` + 1; the same curve graphile-worker uses. */
export const backoffSeconds = (attempt: number) => Math.exp(Math.min(attempt, 10));

import { z } from 'zod';
import type { CronDef, TaskDef } from '../src/ports/jobs/jobs.ts';
import { recordCheck } from '../src/services/status.ts';
import { accessCrontab, accessTasks } from './access-tasks.ts';

const statusCheck: TaskDef = {
  name: 'status_check',
  payload: z.object({}).loose(),
  run: (app) => recordCheck(app),
};

/** Every task a worker runs; graphile-worker and the embedded runner both take this list. */
export const tasks: TaskDef[] = [statusCheck, ...accessTasks];

export const crontab: CronDef[] = [{ task: 'status_check', match: '* * * * *' }, ...accessCrontab];

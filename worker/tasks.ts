import { z } from 'zod';
import type { CronDef, TaskDef } from '../src/ports/jobs/jobs.ts';
import { extractFactsTask } from './remember-extraction.ts';
import { expireDueMemories } from '../src/services/memory/memories.ts';
import { recordCheck } from '../src/services/status/checks.ts';
import { accessCrontab, accessTasks } from './access-tasks.ts';

const statusCheck: TaskDef = {
  name: 'status_check',
  payload: z.object({}).loose(),
  run: (app) => recordCheck(app),
};

const expireMemories: TaskDef = {
  name: 'expire_memories',
  payload: z.object({}).loose(),
  run: async (app) => {
    const n = await expireDueMemories(app);
    if (n) app.log.info({ expired: n }, 'expired memories swept');
  },
};

/** Every task a worker runs; graphile-worker and the embedded runner both take this list. */
export const tasks: TaskDef[] = [statusCheck, extractFactsTask, expireMemories, ...accessTasks];

export const crontab: CronDef[] = [
  { task: 'status_check', match: '* * * * *' },
  // Hourly (api.md 8); search hides expired facts already, the sweep records it (expired_at).
  { task: 'expire_memories', match: '0 * * * *' },
  ...accessCrontab,
];

import { z } from 'zod';
import type { CronDef, TaskDef } from '../src/ports/jobs/jobs.ts';
import { WEBHOOK_TASK } from '../src/services/events/memory-events.ts';
import { MAIL_TASK } from '../src/services/access/signup.ts';
import { deliverEvent } from '../src/services/events/webhooks.ts';

const delivery = z.object({ tenant_id: z.uuid(), event: z.object({ id: z.string(), type: z.string() }).loose() });
const webhookDeliver: TaskDef<typeof delivery> = {
  name: WEBHOOK_TASK,
  payload: delivery,
  run: (app, { tenant_id, event }) => deliverEvent(app, tenant_id, event),
};

const mail = z.object({ to: z.string(), subject: z.string(), text: z.string() });
const mailSend: TaskDef<typeof mail> = {
  name: MAIL_TASK,
  payload: mail,
  run: (app, mail) => app.mailer.send(mail),
};

/** Drops rate-limit windows long past and reveal links a week after they stopped working. */
const accessSweep: TaskDef = {
  name: 'access_sweep',
  payload: z.object({}).loose(),
  run: async (app) => {
    await app.db.query(`delete from rate_limits where window_start < now() - interval '2 hours'`);
    await app.db.query(`delete from reveal_tokens where expires_at < now() - interval '7 days'`);
  },
};

export const accessTasks = [webhookDeliver, mailSend, accessSweep] as TaskDef[];
export const accessCrontab: CronDef[] = [{ task: 'access_sweep', match: '17 * * * *' }];

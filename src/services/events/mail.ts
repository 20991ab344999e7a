import { z } from 'zod';
import type { App } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import type { Mail } from '../../ports/mailer.ts';

export const mailJob = defineJob('mail_send', z.object({ to: z.string(), subject: z.string(), text: z.string() }), { maxAttempts: 5 });

/** Mail goes out from a job enqueued with the write, so SMTP never holds up the answer. */
export const enqueueMail = (app: App, q: Queryable, mail: Mail) => app.jobs.enqueue(q, mailJob, mail);

import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { newId } from '../core/ids.ts';
import type { Queryable } from './db/db.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Outbound mail: SMTP when configured, else an outbox table (the embedded default). */
export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  send(mail: Mail): Promise<void>;
}

/** SMTP through nodemailer; `url` like smtp://user:pass@host:587 or smtps://host:465. */
export function smtpMailer(url: string, from: string): Mailer {
  // Short timeouts: a stuck server fails the job (which retries) instead of holding a worker.
  const transport = nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
  return {
    kind: 'smtp',
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}

/**
 * Without SMTP, mail is kept in the database and logged, so a local installation can still
 * sign up and recover keys. The body (it holds one-time links) is logged only outside
 * production mode.
 */
export function outboxMailer(db: Queryable, log: Logger, production: boolean): Mailer {
  return {
    kind: 'outbox',
    async send(mail) {
      await db.query('insert into mail_outbox (id, recipient, subject, body) values ($1, $2, $3, $4)', [newId(), mail.to, mail.subject, mail.text]);
      log.info({ to: mail.to, subject: mail.subject, ...(production ? {} : { body: mail.text }) }, 'mail kept in the outbox (no SMTP configured)');
    },
  };
}

import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { App } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { receiveMail } from './inbound.ts';

/** Recipients of one message at most; all of them are drop addresses, so more is never legitimate. */
const MAX_RECIPIENTS = 100;

export interface InboundSmtp {
  port: number;
  close(): Promise<void>;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

/**
 * The SMTP answer to a failed handoff: a message nobody can read is refused for good (the sender
 * gets a bounce about its own message, never about the address); anything else is ours and
 * temporary, so the sending MTA retries.
 */
function answerFor(app: App, err: unknown, requestId: string): Error {
  if (err instanceof AppError && (err.code === 'BAD_REQUEST' || err.code === 'UNPROCESSABLE_CONTENT')) return smtpError(554, `5.6.0 ${err.detail}`);
  if (err instanceof AppError && err.code === 'PAYLOAD_TOO_LARGE') return smtpError(552, `5.3.4 ${err.detail}`);
  app.log.error({ err, requestId }, 'inbound smtp handoff failed');
  return smtpError(451, `4.3.0 Temporary failure, try again later (request ${requestId})`);
}

/** Reads DATA whole, keeping nothing past the size limit (the server then answers 552 itself). */
function receive(app: App, stream: SMTPServerDataStream, session: SMTPServerSession, done: (err?: Error | null, message?: string) => void) {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= app.config.email.maxBytes) chunks.push(chunk);
  });
  stream.on('error', (err) => done(err));
  stream.on('end', () => {
    if (stream.sizeExceeded) return done();
    const requestId = randomUUID();
    const { mailFrom, rcptTo } = session.envelope;
    const mail = { to: rcptTo.map((r) => r.address), from: mailFrom ? mailFrom.address : '', raw: Buffer.concat(chunks) };
    receiveMail(app, mail, requestId).then(
      () => done(null, 'OK: message accepted'),
      (err: unknown) => done(answerFor(app, err, requestId)),
    );
  });
}

/**
 * `orgmem inbound-smtp`: an SMTP listener for the drop domain that hands each message to the
 * same delivery as POST /v1/memory/email/inbound. It takes RCPT only for the drop domain (550
 * for any other, so it is no open relay) but any local part there, so it does not tell which
 * addresses exist either. No AUTH and no STARTTLS: put it behind the MX or on a private network.
 */
export async function startInboundSmtp(app: App, opts: { host: string; port: number }): Promise<InboundSmtp> {
  const { domain, maxBytes } = app.config.email;
  const server = new SMTPServer({
    banner: 'orgmem email drop',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: maxBytes,
    rejectOversized: true,
    maxRecipients: MAX_RECIPIENTS,
    logger: false,
    onRcptTo(address, _session, callback) {
      const at = address.address.lastIndexOf('@');
      if (at > 0 && address.address.slice(at + 1).toLowerCase() === domain) return callback();
      callback(smtpError(550, `5.7.1 Relaying denied: this server takes mail for @${domain} only`));
    },
    onData: (stream, session, callback) => receive(app, stream, session, callback),
  });
  server.on('error', (err) => app.log.error({ err }, 'inbound smtp error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;
  app.log.info(`inbound smtp listening on ${opts.host}:${port} for @${domain}`);
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

import { HELP, onShutdown, openApp, stopApp, portNumber, runJobs, type Command } from './command.ts';

export const inboundSmtp: Command = {
  usage: `Usage: orgmem inbound-smtp [--host H] [--port P]

The email drop's SMTP listener on its own, beside \`serve\` and \`worker\` on the same PostgreSQL
database (embedded: \`orgmem serve --inbound-smtp\`).

Options:
  --host H          address to listen on (default: ORGMEM_INBOUND_SMTP_HOST, else 127.0.0.1)
  --port P          port to listen on (default: ORGMEM_INBOUND_SMTP_PORT, else 2525)
${HELP}`,
  options: { host: { type: 'string' }, port: { type: 'string' } },
  async run(values) {
    const { loadConfig } = await import('../../src/core/config.ts');
    const config = loadConfig();
    const port = portNumber(values.port, config.email.smtpPort);
    const app = await openApp();
    // Embedded mode has no other process to ingest the attachments; with PostgreSQL the worker does.
    if (app.db.kind === 'pglite') await runJobs(app);
    const { startInboundSmtp } = await import('../../src/services/email/smtp-listener.ts');
    const smtp = await startInboundSmtp(app, { host: typeof values.host === 'string' ? values.host : config.email.smtpHost, port });
    onShutdown(async () => {
      await smtp.close();
      await stopApp(app);
    });
  },
};

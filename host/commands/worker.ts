import { HELP, onShutdown, openApp, stopApp, runJobs, warmEmbedder, type Command } from './command.ts';

export const worker: Command = {
  usage: `Usage: orgmem worker

Runs background jobs (extraction, ingestion, webhooks, scheduled tasks) only, beside \`orgmem serve
--no-worker\` on the same PostgreSQL database. Embedded, \`orgmem serve\` runs them itself.

Options:
${HELP}`,
  async run() {
    const app = await openApp();
    warmEmbedder(app);
    await runJobs(app);
    app.log.info('orgmem worker running');
    onShutdown(() => stopApp(app));
  },
};

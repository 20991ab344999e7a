import { HELP, cliLog, openApp, stopApp, type Command } from './command.ts';

export const migrateCommand: Command = {
  usage: `Usage: orgmem migrate

Applies the database migrations that have not run yet and exits. Every other command migrates
on start as well; run this one first when several processes share a PostgreSQL database.

Options:
${HELP}`,
  async run() {
    await stopApp(await openApp());
    process.stdout.write('Migrations applied.\n');
  },
};

export const reembedCommand: Command = {
  usage: `Usage: orgmem reembed

Re-embeds every memory with the configured embedder, after changing the embedder or its
dimension (ORGMEM_EMBEDDER, ORGMEM_EMBEDDINGS_*). Stop the service first.

Options:
${HELP}`,
  async run() {
    const [{ loadConfig }, { openPglite }, { openPostgres }, { makeEmbedder }, { reembed }] = await Promise.all([
      import('../../src/core/config.ts'),
      import('../../src/ports/db/pglite.ts'),
      import('../../src/ports/db/postgres.ts'),
      import('../../src/ports/embedder/index.ts'),
      import('../../src/maintenance/reembed.ts'),
    ]);
    const config = loadConfig();
    const db = config.databaseUrl ? openPostgres(config.databaseUrl, 2) : await openPglite(config.dataDir);
    try {
      const { from, to, memories } = await reembed(db, makeEmbedder(config.embedder), await cliLog(config.logLevel));
      process.stdout.write(`Re-embedded ${memories} memories (${from} -> ${to} dimensions).\n`);
    } finally {
      await db.close();
    }
  },
};

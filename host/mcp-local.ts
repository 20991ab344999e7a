import { pino } from 'pino';
import { closeApp, createApp, startWorker } from './app.ts';
import { serverHolding, type ServerFile } from './server-file.ts';
import { loadConfig, type Config } from '../src/core/config.ts';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { DataDirInUseError } from '../src/ports/db/dir-lock.ts';
import { hasEmbeddedData } from '../src/ports/db/pglite.ts';
import { runBridge, type BridgeTarget } from '../mcp/bridge.ts';
import { IN_CLIENT_ENV, serveProblem, type Session } from '../mcp/problem.ts';
import { serveStdio } from '../mcp/stdio.ts';

/**
 * `orgmem mcp` without ORGMEM_URL: the process opens the data itself (the embedded directory or
 * DATABASE_URL). When an `orgmem serve` holds the embedded directory, it goes through that server,
 * at the address the server wrote there (host/server-file.ts).
 */
export async function openLocal(apiKey: string): Promise<Session> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    return serveProblem(`${(err as Error).message}\nFix: correct these variables ${IN_CLIENT_ENV}.`);
  }
  const data = describeData(config, process.env);
  // Never a new, empty database: it has no tenant, so no key could ever be one of its own.
  if (data.dir && !hasEmbeddedData(data.dir)) {
    return serveProblem(
      `There is no orgmem data in ${data.dir}. ${data.chosen}Fix: ${IN_CLIENT_ENV}, ${data.fix}, or set ORGMEM_URL to that server's address.`,
    );
  }
  let app: App;
  try {
    // stdout carries the protocol, so logs go to stderr.
    app = await createApp(config, { log: pino({ level: config.logLevel }, pino.destination(2)) });
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) return serveProblem(`Could not open ${data.name}: ${(err as Error).message}`);
    const server = serverHolding(err);
    if (server) {
      process.stderr.write(`orgmem mcp: ${err.message}\norgmem mcp: going through the orgmem serve that holds it, at ${server.url}\n`);
      return runBridge(server.url, apiKey, through(server, data));
    }
    return serveProblem(
      `The data directory ${err.dir} is in use by another orgmem process (pid ${err.owner}), which is not an orgmem serve to go through ` +
        '(another orgmem mcp, a worker, a migration, or a server still starting). Fix: stop that process, or set ORGMEM_URL ' +
        `${IN_CLIENT_ENV} to the address of the orgmem serve that uses this directory.`,
    );
  }
  try {
    const server = await serveStdio(app, apiKey);
    // Embedded mode has no other process to run jobs; with PostgreSQL a separate worker does.
    if (app.db.kind === 'pglite') await startWorker(app);
    return {
      async close() {
        await server.close();
        await closeApp(app);
      },
    };
  } catch (err) {
    await closeApp(app);
    if (!(err instanceof AppError)) throw err;
    return serveProblem(refusedKey(data, `${err.status}: ${err.detail}`));
  }
}

/** The data a configuration opens, which setting chose it, and the fix when it is the wrong data. */
interface DataSetting {
  /** The data as the messages name it. */
  name: string;
  /** The embedded directory; null for PostgreSQL and in-memory data. */
  dir: string | null;
  /** Which setting chose it, as a sentence (empty when the name says it). */
  chosen: string;
  /** The setting that points at other data, as the start of a fix. */
  fix: string;
}

function describeData(config: Config, env: Record<string, string | undefined>): DataSetting {
  if (config.databaseUrl) {
    return {
      name: 'the PostgreSQL database of DATABASE_URL',
      dir: null,
      chosen: '',
      fix: 'point DATABASE_URL at the database of the orgmem server that issued the key',
    };
  }
  const dir = config.dataDir.startsWith('memory://') ? null : config.dataDir;
  const fix = 'set ORGMEM_DATA_DIR to the data directory of the orgmem serve that issued the key (its log says "embedded data in ...")';
  const name = `the data in ${config.dataDir}`;
  if (env.ORGMEM_DATA_DIR) return { name, dir, chosen: 'That is the directory ORGMEM_DATA_DIR names. ', fix };
  return {
    name,
    dir,
    chosen:
      `That is the default data directory${env.XDG_DATA_HOME ? ' under XDG_DATA_HOME' : ''}: your MCP client starts orgmem mcp with a clean ` +
      "environment, not your shell's, so ORGMEM_DATA_DIR set in your shell does not reach it. ",
    fix,
  };
}

const refusedKey = (data: DataSetting, reason: string) =>
  `ORGMEM_API_KEY is not a key of ${data.name} (${reason}). ${data.chosen}Fix: ${IN_CLIENT_ENV}, ${data.fix}, or set ORGMEM_URL to that ` +
  "server's address, or set ORGMEM_API_KEY to a key of this data (printed by its first orgmem serve, or made with orgmem admin create-key).";

/** The `orgmem serve` holding the directory: a refused key is still the data's, and a silent server is that process's problem. */
const through = (server: ServerFile, data: DataSetting): BridgeTarget => ({
  refusedKey: (detail) => refusedKey(data, `401: ${detail}; asked the orgmem serve at ${server.url} that holds it`),
  wrongServer: `the orgmem serve that holds ${data.dir} (pid ${server.pid}) wrote ${server.url} as its address: restart it, or stop it so that orgmem mcp opens the data itself`,
});

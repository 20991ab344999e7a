import { resolve } from 'node:path';
import { pino } from 'pino';
import { closeApp, createApp, startWorker } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import type { App } from '../src/context.ts';
import { AppError } from '../src/errors.ts';
import { DataDirInUseError } from '../src/ports/db/dir-lock.ts';
import { runBridge } from './bridge.ts';
import { serveProblem, type Session } from './problem.ts';
import { serveStdio } from './stdio.ts';

/**
 * `orgmem mcp` without ORGMEM_URL: the process opens the data itself (the embedded directory or
 * DATABASE_URL). When another orgmem process holds the embedded directory and a server answers
 * where this configuration's `orgmem serve` listens (HOST, PORT), it goes through that server.
 */
export async function openLocal(apiKey: string): Promise<Session> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    return serveProblem(`${(err as Error).message}\nFix: correct these variables in the env of this MCP server's config.`);
  }
  let app: App;
  try {
    // stdout carries the protocol, so logs go to stderr.
    app = await createApp(config, { log: pino({ level: config.logLevel }, pino.destination(2)) });
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) return serveProblem((err as Error).message);
    const url = serveAddress(config);
    if (await answers(url)) {
      process.stderr.write(`orgmem mcp: ${err.message}\norgmem mcp: going through the server at ${url}\n`);
      return runBridge(url, apiKey);
    }
    return serveProblem(
      `${err.message} No orgmem server answers at ${url} to go through instead. Fix: set ORGMEM_URL to the address ` +
        'of the orgmem serve that uses this directory, or stop the other process.',
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
    const data = config.databaseUrl ? 'the PostgreSQL database of DATABASE_URL' : `the data directory ${resolve(config.dataDir)}`;
    return serveProblem(
      `ORGMEM_API_KEY is not a key of ${data} (${err.status}: ${err.detail}). Fix: use a key of this data (printed by ` +
        'its first orgmem serve, or made with orgmem admin create-tenant), point ORGMEM_DATA_DIR or DATABASE_URL at the ' +
        'data your key belongs to, or set ORGMEM_URL to the server that issued it.',
    );
  }
}

/** Where `orgmem serve` listens with this configuration, as a client reaches it. */
function serveAddress(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/v1/memory/health`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

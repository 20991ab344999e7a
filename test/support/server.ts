import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { closeApp, createApp, startWorker } from '../../host/app.ts';
import { loadConfig } from '../../src/core/config.ts';
import type { App } from '../../src/core/context.ts';
import { buildServer } from '../../host/server.ts';
import { createTenant } from '../../src/services/access/tenants.ts';
import { freshDatabase } from './database.ts';

export interface TestServer {
  url: string;
  app: App;
  /** Key of an admin tenant created for this server. */
  adminKey: string;
  close(): Promise<void>;
}

/**
 * The app's log: not shown (TEST_LOG_LEVEL shows it), but every error the pipeline reports as a
 * broken contract (one a procedure does not declare) is kept, and close() fails with them: every
 * test that goes through this server checks the declarations too.
 */
function contractLog(lines?: string[]) {
  const broken: string[] = [];
  const show = process.env.TEST_LOG_LEVEL;
  const log = pino(
    { level: show ?? (lines ? 'trace' : 'error') },
    {
      write(line: string) {
        lines?.push(line);
        const entry = JSON.parse(line) as { msg?: string; procedure?: string; code?: string; detail?: string };
        if (entry.msg === 'undeclared error answered') broken.push(`${entry.procedure}: ${entry.code} (${entry.detail})`);
        if (show) process.stdout.write(line);
      },
    },
  );
  return { log, broken };
}

/**
 * A real server on an ephemeral port with its own database: an in-memory PGlite, or, when
 * TEST_DATABASE_URL is set, a fresh PostgreSQL database created for it and dropped after (one of the
 * cluster on a Citus coordinator).
 */
export async function startServer(env: Record<string, string> = {}, opts: { worker?: boolean; logLines?: string[] } = {}): Promise<TestServer> {
  const base = process.env.TEST_DATABASE_URL;
  let dropDb = async () => {};
  const dbEnv: Record<string, string> = { ORGMEM_DATA_DIR: 'memory://' };
  if (base) {
    const fresh = await freshDatabase(base);
    dbEnv.DATABASE_URL = fresh.url;
    dropDb = fresh.drop;
  }
  // Every test reaches the server from 127.0.0.1: the beacon's budget per address (the fuzzer sends
  // it hundreds) would make whichever test comes last fail; test/rate-limit.test.ts sets its own.
  const config = loadConfig({ ...process.env, ORGMEM_DB_POOL: '8', ORGMEM_PULSE_PER_IP: '1000000', ...dbEnv, ...env });
  const { log, broken } = contractLog(opts.logLines);
  const app = await createApp(config, { log });
  const server = await buildServer(app);
  await server.listen({ host: '127.0.0.1', port: 0 });
  if (opts.worker !== false) await startWorker(app);
  const { api_key } = await createTenant(app, {
    name: 'operator',
    email: `operator-${randomBytes(4).toString('hex')}@test.local`,
    is_admin: true,
    tier: 'enterprise',
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    adminKey: api_key,
    async close() {
      await server.close();
      await closeApp(app);
      await dropDb();
      if (broken.length) throw new Error(`Errors answered that their procedures do not declare:\n${broken.join('\n')}`);
    },
  };
}

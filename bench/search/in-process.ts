import { readFileSync } from 'node:fs';
import { closeApp, createApp } from '../../host/app.ts';
import { loadConfig } from '../../src/core/config.ts';
import type { App, AuthedCtx } from '../../src/core/context.ts';
import { authenticate } from '../../src/services/access/authenticate.ts';

/** A PostgreSQL database that bench/search/run.ts loaded (its key in /tmp/<db>.key), or a PGlite data directory (its key in <dir>.key). */
export type BenchDatabase = { base: string; db: string } | { dataDir: string };

/**
 * The service opened in this process on a bench database, as `orgmem serve` opens it (pool of
 * `pool`; on PostgreSQL the hash embedder, on PGlite the bundled model, the embedded default),
 * with the context of the bench tenant's key: for benches that call search() directly.
 */
export async function openInProcess(
  where: BenchDatabase,
  pool: number,
  env: Record<string, string> = {},
): Promise<{ app: App; ctx: AuthedCtx; url: string; close: () => Promise<void> }> {
  let url = '';
  let target: Record<string, string>;
  let keyFile: string;
  if ('dataDir' in where) {
    target = { ORGMEM_DATA_DIR: where.dataDir, ORGMEM_EMBEDDER: 'local' };
    keyFile = `${where.dataDir}.key`;
  } else {
    const u = new URL(where.base);
    u.pathname = `/${where.db}`;
    url = u.toString();
    target = { DATABASE_URL: url, ORGMEM_EMBEDDER: 'hash' };
    keyFile = `/tmp/${where.db}.key`;
  }
  const config = loadConfig({
    ...process.env,
    ...target,
    ORGMEM_DB_POOL: String(pool),
    ORGMEM_RATE_LIMIT: 'false',
    ORGMEM_LOG_LEVEL: 'warn',
    ...env,
  });
  const app = await createApp(config);
  try {
    const auth = await authenticate(app, `Bearer ${readFileSync(keyFile, 'utf8').trim()}`);
    return { app, ctx: { app, requestId: 'bench', tenant: auth.tenant, agent: auth.agent }, url, close: () => closeApp(app) };
  } catch (err) {
    await closeApp(app);
    throw err;
  }
}

import { readFileSync } from 'node:fs';
import { closeApp, createApp } from '../../host/app.ts';
import { loadConfig } from '../../src/core/config.ts';
import type { App, AuthedCtx } from '../../src/core/context.ts';
import { authenticate } from '../../src/services/access/authenticate.ts';

/**
 * The service opened in this process on a database that bench/search/run.ts loaded (`--load-only`
 * or `--keep`), as `orgmem serve` opens it (hash embedder, pool of `pool`), with the context of
 * the bench tenant's key (/tmp/<db>.key): for benches that call search() directly.
 */
export async function openInProcess(
  baseUrl: string,
  dbName: string,
  pool: number,
  env: Record<string, string> = {},
): Promise<{ app: App; ctx: AuthedCtx; url: string; close: () => Promise<void> }> {
  const url = new URL(baseUrl);
  url.pathname = `/${dbName}`;
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: url.toString(),
    ORGMEM_EMBEDDER: 'hash',
    ORGMEM_DB_POOL: String(pool),
    ORGMEM_RATE_LIMIT: 'false',
    ORGMEM_LOG_LEVEL: 'warn',
    ...env,
  });
  const app = await createApp(config);
  try {
    const auth = await authenticate(app, `Bearer ${readFileSync(`/tmp/${dbName}.key`, 'utf8').trim()}`);
    return { app, ctx: { app, requestId: 'bench', tenant: auth.tenant, agent: auth.agent }, url: url.toString(), close: () => closeApp(app) };
  } catch (err) {
    await closeApp(app);
    throw err;
  }
}

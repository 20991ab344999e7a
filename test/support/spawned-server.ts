import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { closeApp, createApp } from '../../host/app.ts';
import { loadConfig } from '../../src/core/config.ts';
import { createTenant } from '../../src/services/access/tenants.ts';
import { freshDatabase } from './database.ts';
import { spawnServe } from './serve.ts';

/**
 * `orgmem serve` as a process of its own that a test can kill with SIGKILL and start again on the
 * same data: a fresh data directory, or a fresh PostgreSQL database when TEST_DATABASE_URL is set.
 * One tenant is made before the first start (`key`); `worker` runs the job queue in the process. `sql` reads the data while no process holds it
 * (embedded) or at any time (PostgreSQL).
 */
export async function spawnedServer(env: Record<string, string>, opts: { worker?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-spawned-'));
  const base = process.env.TEST_DATABASE_URL;
  const name = `orgmem_t_${randomBytes(6).toString('hex')}`;
  const dataEnv: Record<string, string> = { ORGMEM_DATA_DIR: join(dir, 'data') };
  const fresh = base ? await freshDatabase(base) : undefined;
  if (fresh) dataEnv.DATABASE_URL = fresh.url;
  const fullEnv = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    ORGMEM_MASTER_KEY: randomBytes(32).toString('base64'),
    ORGMEM_LOG_LEVEL: 'info',
    ...dataEnv,
    ...env,
  };
  /** The data opened in this process (never while a spawned process holds an embedded directory). */
  const open = async () => createApp(loadConfig(fullEnv), { log: pino({ level: 'silent' }) });
  const setup = await open();
  const { api_key, tenant } = await createTenant(setup, { name: 'spawned', email: `spawned-${name}@test.local`, tier: 'enterprise' });
  await closeApp(setup);

  let running: ReturnType<typeof spawnServe> | null = null;
  return {
    key: api_key,
    tenantId: tenant.id,
    dataDir: dataEnv.ORGMEM_DATA_DIR!,
    /** Starts the process; resolves with its URL once it listens. */
    async start(): Promise<string> {
      running = spawnServe(fullEnv, dir, opts);
      return (await running.ready).url;
    },
    /** kill -9: no shutdown handler runs. */
    async kill(): Promise<void> {
      const r = running;
      running = null;
      if (!r) return;
      await new Promise<void>((done) => {
        r.child.once('exit', () => done());
        r.child.kill('SIGKILL');
      });
    },
    /** Runs `fn` on the data opened in this process, once no spawned process holds it. */
    async read<T>(fn: (app: Awaited<ReturnType<typeof open>>) => Promise<T>): Promise<T> {
      const app = await open();
      try {
        return await fn(app);
      } finally {
        await closeApp(app);
      }
    },
    async close(): Promise<void> {
      await running?.stop();
      await fresh?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

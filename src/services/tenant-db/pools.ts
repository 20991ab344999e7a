import { LRUCache } from 'lru-cache';
import type { App } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { Db } from '../../ports/db/db.ts';
import { openPostgres } from '../../ports/db/postgres.ts';
import { withUnitsOfWork } from '../../ports/db/unit-of-work.ts';
import { PrivateTargetError, targetRule } from '../../ports/public-target.ts';
import { migrateTenantDb } from './schema.ts';

// A tenant's server that does not answer must not hold a request for postgres.js's 30 s.
const CONNECT_TIMEOUT_S = 5;
// Connections of a pool close after this long unused; the pool itself after ORGMEM_TENANT_DB_IDLE_SECONDS.
const CONNECTION_IDLE_S = 60;

interface Pools {
  /** Keyed by the sealed connection string: a PUT seals anew, so a changed config opens a new pool (in every process). */
  cache: LRUCache<string, Promise<App>>;
}

// Per running service (tests start several in one process): keyed by its platform database,
// which a tenant's App view shares with it.
const perPlatform = new WeakMap<Db, Pools>();

function poolsOf(app: App): Pools {
  let pools = perPlatform.get(app.platform);
  if (!pools) {
    const { maxPools, idleSeconds } = app.config.tenantDb;
    pools = {
      cache: new LRUCache<string, Promise<App>>({
        max: maxPools,
        ttl: idleSeconds * 1000,
        updateAgeOnGet: true,
        ttlAutopurge: true,
        // Evicted (idle, or the cap reached) or replaced: postgres.js lets running queries finish, then closes.
        dispose: (opening) => void opening.then((view) => view.db.close()).catch(() => undefined),
      }),
    };
    perPlatform.set(app.platform, pools);
  }
  return pools;
}

/**
 * Opens a pool on a tenant's database (migrating it to this version's schema, a no-op once it is
 * current) and the App view over it: the same service with `db` the tenant's and jobs queued on
 * the platform (the workers poll the platform's queue). Not cached: `databaseApp` caches.
 */
export async function openDatabaseApp(app: App, url: string): Promise<App> {
  const raw = openPostgres(url, app.config.tenantDb.pool, {
    connectTimeout: CONNECT_TIMEOUT_S,
    idleTimeout: CONNECTION_IDLE_S,
    // A tenant-chosen address: checked at every connection, whenever the config was saved.
    targets: targetRule(app.config),
  });
  try {
    // Stored as the platform's database is, which the App's searches and inserts are written for.
    await migrateTenantDb(raw, app.embedder.dimensions, { ...app.config.search.vectorIndex, storage: app.vectorStorage });
  } catch (err) {
    await raw.close().catch(() => undefined);
    throw err;
  }
  const platform = app.platform;
  return {
    ...app,
    db: withUnitsOfWork(raw),
    // A job is queued in the platform's transaction of the call (committed after the tenant's
    // data, see unit-of-work.ts), never in a transaction of the tenant's database, which has no queue.
    jobs: { ...app.jobs, enqueue: (_q, job, payload, opts) => app.jobs.enqueue(platform, job, payload, opts) },
  };
}

/** The App view of the database whose sealed connection string is `sealed`: one pool per database and process. */
export function databaseApp(app: App, sealed: string): Promise<App> {
  const { cache } = poolsOf(app);
  let opening = cache.get(sealed);
  if (!opening) {
    opening = openDatabaseApp(app, app.secrets.decrypt(sealed)).catch((err: unknown) => {
      // Saved before production mode, or before its name moved: refused, and said so.
      if (err instanceof PrivateTargetError)
        throw new AppError('SERVICE_UNAVAILABLE', `Your own database (/v1/memory/database/config) is not used: ${err.message}`);
      throw err;
    });
    cache.set(sealed, opening);
    // A failed open is not kept: the next request tries again.
    opening.catch(() => cache.get(sealed) === opening && cache.delete(sealed));
  }
  return opening;
}

/** How many tenant databases this process has open (the cap is ORGMEM_TENANT_DB_MAX_POOLS). */
export const openPoolCount = (app: App) => poolsOf(app).cache.size;

/** Closes every tenant database pool of this service (at shutdown). */
export async function closeDatabasePools(app: App): Promise<void> {
  const pools = perPlatform.get(app.platform);
  if (!pools) return;
  const open = [...pools.cache.values()];
  pools.cache.clear();
  await Promise.all(open.map((p) => p.then((view) => view.db.close()).catch(() => undefined)));
}

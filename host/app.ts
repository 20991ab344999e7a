import { pino, type Logger } from 'pino';
import { crontab, tasks } from './tasks.ts';
import type { Config } from '../src/core/config.ts';
import type { App } from '../src/core/context.ts';
import { migrate } from '../src/maintenance/migrate.ts';
import { currentStorage, storageMismatch } from '../src/maintenance/vector-storage.ts';
import { openLocalBlobStore } from '../src/ports/blobs/local.ts';
import { s3BlobStore } from '../src/ports/blobs/s3.ts';
import { blobUrlSigningKey } from '../src/ports/blobs/signed-url.ts';
import type { Db } from '../src/ports/db/db.ts';
import { openPglite } from '../src/ports/db/pglite.ts';
import { openPostgres } from '../src/ports/db/postgres.ts';
import { withUnitsOfWork } from '../src/ports/db/unit-of-work.ts';
import type { Embedder } from '../src/ports/embedder/embedder.ts';
import { makeEmbedder } from '../src/ports/embedder/index.ts';
import { closeLocalEmbedder } from '../src/ports/embedder/local-use.ts';
import { embeddedQueue } from '../src/ports/jobs/embedded.ts';
import { graphileQueue } from '../src/ports/jobs/graphile.ts';
import { outboxMailer, smtpMailer } from '../src/ports/mailer.ts';
import { createMetrics, timedEmbedder } from '../src/ports/metrics.ts';
import { aesGcmSecrets, checkMasterKey, loadMasterKey } from '../src/ports/secrets.ts';
import { closeOcr } from '../src/services/files/ocr.ts';
import { closeParsers } from '../src/services/files/parse-runner.ts';
import { startHandovers, stopHandovers } from '../src/services/ledger/handover.ts';
import { closeDatabasePools } from '../src/services/tenant-db/pools.ts';

export interface AppOptions {
  embedder?: Embedder;
  log?: Logger;
}

/** Opens the database (migrating it), the embedder and the job queue: the ports every entry point needs. */
export async function createApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const log = opts.log ?? pino({ level: config.logLevel });
  const metrics = createMetrics(config.metrics);
  // Every embedding of the process goes through the App's embedder: timed there, once.
  const embedder = timedEmbedder(opts.embedder ?? makeEmbedder(config.embedder), metrics);
  // Every user of the database gets it through the units of work, so that a call's writes commit with its audit entry.
  const db: Db = withUnitsOfWork(config.databaseUrl ? openPostgres(config.databaseUrl, config.dbPool) : await openPglite(config.dataDir));
  try {
    await migrate(db, embedder.dimensions, config.search.vectorIndex);
    const held = await currentStorage(db);
    const mismatch = storageMismatch(held, config.search.vectorIndex);
    if (mismatch) log.warn(mismatch);
    const masterKey = loadMasterKey(config.masterKey, config.dataDir);
    const secrets = aesGcmSecrets(masterKey.key);
    await checkMasterKey(db, secrets, masterKey);
    const blobs = config.storage.s3 ? s3BlobStore(config.storage.s3) : await openLocalBlobStore(config.storage.dir, blobUrlSigningKey(masterKey.key));
    const jobs = config.databaseUrl
      ? await graphileQueue<App>(config.databaseUrl, config.workerConcurrency, config.workerHeartbeatSeconds, log)
      : embeddedQueue<App>(db, config.workerConcurrency, log);
    const mailer = config.mail.smtpUrl ? smtpMailer(config.mail.smtpUrl, config.mail.from) : outboxMailer(db, log, config.production);
    const app: App = { config, db, platform: db, embedder, jobs, secrets, mailer, blobs, log, metrics, vectorStorage: held.storage ?? held.column };
    startHandovers(app);
    return app;
  } catch (err) {
    await db.close();
    throw err;
  }
}

export async function startWorker(app: App): Promise<void> {
  await app.jobs.start(app, tasks, crontab);
}

export async function closeApp(app: App): Promise<void> {
  await app.jobs.stop();
  // Before the databases close: the counts go to the database of each memory, tenants' own included.
  await stopHandovers(app);
  await closeDatabasePools(app);
  await app.db.close();
  await app.blobs.close();
  await closeOcr();
  await closeParsers();
  await closeLocalEmbedder();
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { App, AuthedCtx } from '../src/core/context.ts';
import { defineJob, defineTask, type CronDef, type JobMeta, type TaskDef } from '../src/ports/jobs/jobs.ts';
import { actFor, type ActingJob } from '../src/services/access/grants.ts';
import { dropOldWindows } from '../src/services/access/rate-limit.ts';
import { dropOldLinks } from '../src/services/access/signup.ts';
import { dropOldStripeEvents } from '../src/services/billing/accounts.ts';
import { mailJob } from '../src/services/events/mail.ts';
import { connectorSyncJob, enqueueDueSyncs, syncConnection } from '../src/services/connectors/sync.ts';
import { flushWebhook, sweepOutbox, webhookFlushJob } from '../src/services/events/webhook-outbox.ts';
import { consolidationJob, failRun, runConsolidation, startDueRuns } from '../src/services/consolidation/run.ts';
import { ingestJob } from '../src/services/files/batches.ts';
import { dropUnusedPresigns } from '../src/services/files/drop.ts';
import { abandonIngestFile, runIngestFile } from '../src/services/files/ingest-run.ts';
import { extractionJob } from '../src/services/graph/extraction-jobs.ts';
import { abandonExtraction, runExtraction } from '../src/services/graph/extraction-run.ts';
import { dropOldImports, importJob } from '../src/services/memory/import.ts';
import { abandonImport, runImport } from '../src/services/memory/import-run.ts';
import { dropOldRememberKeys } from '../src/services/graph/remember.ts';
import { dropOldLedgerEntries } from '../src/services/ledger/retention.ts';
import { secondOpinion } from '../src/services/graph/second-opinion.ts';
import { secondOpinionJob } from '../src/services/trust/second-opinion-job.ts';
import { dropOldProxyFailures } from '../src/services/proxy/turn.ts';
import { expireDueMemories } from '../src/services/memory/lifecycle.ts';
import { analyzeJob, analyzeStaleTables } from '../src/services/memory/table-stats.ts';
import { fillGraph, graphFillJob, recordFillFailure } from '../src/services/memory/graph-tenants.ts';
import { recordCheck } from '../src/services/status/checks.ts';
import { deleteFiles, fileCleanupJob } from '../src/services/storage/file-cleanup.ts';
import { forEachDataApp, tenantApp } from '../src/services/tenant-db/tenant-app.ts';

/*
 * Every background task: a job the services declare (and enqueue with the write that needs it)
 * bound to the service call that runs it, and the jobs the crontab starts. A job of one tenant
 * runs with that tenant's App (its own database, if it has one); sweeps over data visit each. graphile-worker and
 * the embedded runner both take this list.
 */

/**
 * A job that acts for its tenant (`acts`: an agent or a service identity, and the grant it needs):
 * the grants' resolver (access/grants.ts) gives it its context before its code runs. A refused
 * actor (its key revoked, its grant removed since the job was queued) does not run: `settle`
 * records the reason where the tenant sees it, as for a job whose last try a crash cut short.
 */
function actingTask<S extends z.ZodType<{ tenant_id: string }>>(
  job: ActingJob<S>,
  run: (ctx: AuthedCtx, payload: z.output<S>, meta: JobMeta) => Promise<unknown>,
  settle?: (app: App, payload: z.output<S>, reason: string) => Promise<void>,
) {
  const abandon = settle && (async (app: App, payload: z.output<S>, reason: string) => settle(await tenantApp(app, payload.tenant_id), payload, reason));
  return defineTask(
    job,
    async (app: App, payload, meta) => {
      const acted = await actFor(app, job.acts, payload, `${job.name}:${randomUUID()}`);
      if (acted && 'ctx' in acted) await run(acted.ctx, payload, meta);
      else if (acted) {
        app.log.warn({ task: job.name, tenant_id: payload.tenant_id, reason: acted.refused }, 'a job was refused to the agent it acts for');
        await abandon?.(app, payload, acted.refused);
      }
    },
    abandon,
  );
}

const extractFacts = actingTask(
  extractionJob,
  (ctx, { job_id }, meta) => runExtraction(ctx, job_id, meta),
  (app, { tenant_id, job_id }, reason) => abandonExtraction(app, tenant_id, job_id, reason),
);

const ingestFile = actingTask(
  ingestJob,
  (ctx, { batch_id, key }, meta) => runIngestFile(ctx, batch_id, key, meta),
  (app, { tenant_id, batch_id, key }, reason) => abandonIngestFile(app, tenant_id, batch_id, key, reason),
);

const importRecords = actingTask(
  importJob,
  (ctx, { import_id }, meta) => runImport(ctx, import_id, meta),
  (app, { tenant_id, import_id }, reason) => abandonImport(app, tenant_id, import_id, reason),
);

const webhookFlush = defineTask(webhookFlushJob, (app: App, { tenant_id }) => flushWebhook(app, tenant_id));

const mailSend = defineTask(mailJob, (app: App, mail) => app.mailer.send(mail));

const fileCleanup = defineTask(fileCleanupJob, async (app: App, { tenant_id, keys }) => deleteFiles(await tenantApp(app, tenant_id), tenant_id, keys));

/** Planner statistics: ANALYZE of the tables changed past autovacuum's rule; queued by bulk writes and every minute. */
const analyzeTables = defineTask(analyzeJob, async (app: App) => {
  await forEachDataApp(app, async (data) => {
    await analyzeStaleTables(data);
  });
});

/** Adds a tenant that reached ORGMEM_GRAPH_FROM memories to the vector graph; a try cut short is kept as its failure. */
const graphFill = defineTask(
  graphFillJob,
  async (app: App, { tenant_id }) => {
    await fillGraph(await tenantApp(app, tenant_id), tenant_id);
  },
  async (app: App, { tenant_id }, reason) => recordFillFailure(await tenantApp(app, tenant_id), tenant_id, reason),
);

const consolidate = actingTask(
  consolidationJob,
  (ctx, { changeset_id }) => runConsolidation(ctx, changeset_id),
  (app, { tenant_id, changeset_id }, reason) => failRun(app, tenant_id, changeset_id, reason),
);

const secondOpinionTask = defineTask(secondOpinionJob, async (app: App, { tenant_id, memory_ids }, meta) =>
  secondOpinion(await tenantApp(app, tenant_id), tenant_id, memory_ids, meta),
);

const connectorSync = actingTask(connectorSyncJob, (ctx, { connection_id }) => syncConnection(ctx, connection_id, true));

/** A job the crontab starts carries only the queue's own `_cron` stamp. */
const cronJob = (name: string) => defineJob(name, z.object({}).loose());

/** The status page's self-check (database, job queue lag, file store); it also drops checks older than 7 days. */
const statusCheck = defineTask(cronJob('status_check'), async (app: App) => {
  await recordCheck(app);
});

const expireMemories = defineTask(cronJob('expire_memories'), async (app: App) => {
  await forEachDataApp(app, async (data) => {
    const n = await expireDueMemories(data);
    if (n) app.log.info({ expired: n }, 'expired memories swept');
  });
});

/**
 * Drops rate-limit windows long past, reveal links a week after they stopped working, the
 * Stripe event ids kept against replays once they are 30 days old, webhook events past the
 * outbox's bounds, and the jobs out of tries queued a week ago (whose owners recorded the failure).
 */
const accessSweep = defineTask(cronJob('access_sweep'), async (app: App) => {
  await dropOldWindows(app.platform);
  await dropOldLinks(app.platform);
  await dropOldStripeEvents(app.platform);
  const [events, jobs] = [await sweepOutbox(app.platform), await app.jobs.dropSettled(7)];
  if (events || jobs) app.log.info({ webhook_events: events, jobs }, 'webhook events past their bounds and settled jobs dropped');
});

/** Keeps the queue's order fair as backlogs shrink (src/ports/jobs/shares.ts). */
const jobsRebalance = defineTask(cronJob('jobs_rebalance'), async (app: App) => {
  await app.jobs.rebalance();
});

/**
 * Drops import records (and their Idempotency-Keys) a week after their last step, remember's
 * Idempotency-Keys a week after their remember, the keys presign issued that no complete took
 * within a day, with any file uploaded at them, the proxy's failed stores after a week, and
 * the ledger's entries past their retention (ORGMEM_LEDGER_DAYS).
 */
const writesSweep = defineTask(cronJob('writes_sweep'), async (app: App) => {
  await forEachDataApp(app, async (data) => {
    const [imports, rememberKeys, presigns, proxyFailures] = [
      await dropOldImports(data),
      await dropOldRememberKeys(data),
      await dropUnusedPresigns(data),
      await dropOldProxyFailures(data),
    ];
    await dropOldLedgerEntries(data);
    if (imports || rememberKeys || presigns || proxyFailures)
      app.log.info(
        { imports, remember_keys: rememberKeys, presigns, proxy_store_failures: proxyFailures },
        'old import records, remember keys, unused presigned keys and failed proxy stores dropped',
      );
  });
});

/** Starts the consolidation runs whose schedule has come (docs/consolidation.md, "Schedule"). */
const consolidationSchedule = defineTask(cronJob('consolidation_schedule'), async (app: App) => {
  await forEachDataApp(app, async (data) => {
    const started = await startDueRuns(data);
    if (started) app.log.info({ runs: started }, 'scheduled consolidation runs started');
  });
});

/** Queues a sync of every connection whose interval has passed. */
const connectorSchedule = defineTask(cronJob('connector_schedule'), async (app: App) => {
  await forEachDataApp(app, async (data) => {
    const queued = await enqueueDueSyncs(data);
    if (queued.length) app.log.info({ connections: queued.length }, 'connector syncs queued');
  });
});

export const tasks: TaskDef<z.ZodType, App>[] = [
  extractFacts,
  ingestFile,
  importRecords,
  webhookFlush,
  mailSend,
  fileCleanup,
  graphFill,
  connectorSync,
  consolidate,
  secondOpinionTask,
  analyzeTables,
  statusCheck,
  expireMemories,
  accessSweep,
  writesSweep,
  connectorSchedule,
  consolidationSchedule,
  jobsRebalance,
];

export const crontab: CronDef[] = [
  { task: statusCheck.name, match: '* * * * *' },
  // Hourly; search hides expired facts already, the sweep records it (expired_at).
  { task: expireMemories.name, match: '0 * * * *' },
  { task: accessSweep.name, match: '17 * * * *' },
  { task: writesSweep.name, match: '23 * * * *' },
  { task: connectorSchedule.name, match: '* * * * *' },
  { task: consolidationSchedule.name, match: '41 * * * *' },
  // Autovacuum's naptime: small writes add up to a stale table too (bulk writes queue it sooner).
  { task: analyzeTables.name, match: '* * * * *' },
  { task: jobsRebalance.name, match: '* * * * *' },
];

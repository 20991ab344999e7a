import type { App } from '../../core/context.ts';
import { iso, newId } from '../../core/ids.ts';
import { citusNodes } from './nodes.ts';
import { queueStalled } from './pipeline.ts';

/*
 * The public status page's self-check, recorded every minute by the `status_check` task
 * (host/tasks.ts) and shown by GET /v1/status. A check has three components:
 *
 * - database: a round trip (`select 1`);
 * - queue: the lag of the job queue, how long the oldest job that is due and not taken has
 *   waited (graphile-worker's jobs on PostgreSQL, the `jobs` table embedded). It fails when that
 *   lag is over QUEUE_LAG_LIMIT_MS, or when work has been queued or processing without progress
 *   past the pipeline's stuck limit (queueStalled, the rule of /v1/memory/health);
 * - blobs: the platform's file store (its S3 bucket, or the local directory, which is always
 *   there): a small object written, read back and deleted. A write is what uploads need, so a
 *   read-only bucket, a full disk or a revoked write permission fail it, which an existence check
 *   (a HEAD) would not notice; it costs two requests and a free delete a minute.
 *
 * The rule: `down` when the database fails (nothing works without it), `degraded` when the
 * database answers but the queue or the file store fails, `operational` when all pass. A check
 * passed (`ok`) when it is operational; the 24 h uptime is the share of checks that passed.
 * A component's error is recorded (and logged) but never shown publicly: it may name hosts,
 * paths or buckets.
 *
 * On a Citus coordinator, the answer of GET /v1/status also counts the cluster's nodes and those
 * that answered a probe (nodes.ts); one not answering makes the status `degraded` (the tenants
 * whose shards it holds get 503). Which node it is (host and port) is the operator's metrics'
 * business, not the public's. Elsewhere `nodes` is null.
 */

/** The oldest due job may wait this long before the queue counts as not draining. */
export const QUEUE_LAG_LIMIT_MS = 60_000;
/** A component that has not answered by then failed (a hung bucket must not hold the minute task). */
const COMPONENT_TIMEOUT_MS = 10_000;
/** Checks are kept this long; only the last 24 h are shown, the rest is for operators reading the table. */
export const KEEP_CHECKS_DAYS = 7;
/** The reserved prefix of the file store's probe; no tenant key can start with it (tenant ids are UUIDs). */
export const PROBE_PREFIX = '.orgmem-status/';
/** The top-level file store result is the last recorded one, while it is this recent. */
const BLOBS_FRESH_MINUTES = 5;
const RECENT = 20;

export type Health = 'operational' | 'degraded' | 'down';

interface Component {
  ok: boolean;
  latency_ms: number;
  error: string | null;
}

interface Checked {
  status: Health;
  database: Component;
  queue: Component & { lag_ms: number | null };
  blobs: Component | null;
}

const round = (ms: number) => Math.round(ms * 100) / 100;
const message = (err: unknown) => String((err as Error)?.message ?? err);

async function timed<T>(what: string, fn: () => Promise<T>): Promise<{ value?: T; latency_ms: number; error: string | null }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer in ${COMPONENT_TIMEOUT_MS / 1000} s`)), COMPONENT_TIMEOUT_MS);
    });
    const value = await Promise.race([fn(), timeout]);
    return { value, latency_ms: performance.now() - started, error: null };
  } catch (err) {
    return { latency_ms: performance.now() - started, error: message(err) };
  } finally {
    clearTimeout(timer);
  }
}

async function checkDatabase(app: App): Promise<Component> {
  const r = await timed('database', () => app.platform.query('select 1'));
  return { ok: r.error === null, latency_ms: r.latency_ms, error: r.error };
}

async function checkQueue(app: App): Promise<Checked['queue']> {
  const r = await timed('job queue', async () => ({ lag: await app.jobs.lagMs(), stalled: await queueStalled(app) }));
  if (!r.value) return { ok: false, latency_ms: r.latency_ms, lag_ms: null, error: r.error };
  const { lag, stalled } = r.value;
  const error =
    lag > QUEUE_LAG_LIMIT_MS
      ? `the oldest due job has waited ${Math.round(lag / 1000)} s (limit ${QUEUE_LAG_LIMIT_MS / 1000} s)`
      : stalled
        ? 'work has been queued or processing without progress past the stuck limit'
        : null;
  return { ok: error === null, latency_ms: r.latency_ms, lag_ms: lag, error };
}

async function checkBlobs(app: App): Promise<Component> {
  // A key of its own per probe: two probes at once (a test beside the cron) never delete each other's object.
  const key = `${PROBE_PREFIX}probe-${newId()}`;
  const body = Buffer.from(`orgmem status probe ${key}`);
  const r = await timed('file store', async () => {
    try {
      await app.blobs.put(key, body, 'text/plain');
      const back = await app.blobs.get(key);
      if (!back || !back.body.equals(body)) throw new Error('the probe object read back differs from what was written');
    } finally {
      await app.blobs.delete([key]).catch(() => {});
    }
  });
  return { ok: r.error === null, latency_ms: r.latency_ms, error: r.error };
}

function overall(database: Component, others: Array<Component | null>): Health {
  if (!database.ok) return 'down';
  return others.some((c) => c && !c.ok) ? 'degraded' : 'operational';
}

/** Runs the components at once; the file store only when asked (never for a public request: it writes). */
async function runChecks(app: App, withBlobs: boolean): Promise<Checked> {
  const [database, queue, blobs] = await Promise.all([checkDatabase(app), checkQueue(app), withBlobs ? checkBlobs(app) : null]);
  return { status: overall(database, [queue, blobs]), database, queue, blobs };
}

/** One self-check, recorded; checks older than KEEP_CHECKS_DAYS are deleted. */
export async function recordCheck(app: App): Promise<Health> {
  const c = await runChecks(app, true);
  const failed = Object.entries({ database: c.database, queue: c.queue, blobs: c.blobs }).filter(([, v]) => v && !v.ok);
  if (failed.length) app.log.warn({ status: c.status, failed: Object.fromEntries(failed.map(([k, v]) => [k, v!.error])) }, 'status check failed');
  await app.platform.query(
    `insert into status_checks (ok, status, latency_ms, detail, database_ok, queue_ok, queue_lag_ms, queue_latency_ms, queue_error, blobs_ok, blobs_latency_ms, blobs_error)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      c.status === 'operational',
      c.status,
      c.database.latency_ms,
      c.database.error,
      c.database.ok,
      c.queue.ok,
      c.queue.lag_ms,
      c.queue.latency_ms,
      c.queue.error,
      c.blobs?.ok ?? null,
      c.blobs?.latency_ms ?? null,
      c.blobs?.error ?? null,
    ],
  );
  await app.platform.query(`delete from status_checks where checked_at < now() - make_interval(days => $1::int)`, [KEEP_CHECKS_DAYS]);
  return c.status;
}

interface CheckRow {
  checked_at: Date;
  ok: boolean;
  status: Health;
  latency_ms: number;
  database_ok: boolean;
  queue_ok: boolean | null;
  queue_lag_ms: number | null;
  queue_latency_ms: number | null;
  blobs_ok: boolean | null;
  blobs_latency_ms: number | null;
}

/** A recorded check as the public sees it: outcomes and timings, never an error text. */
function publicCheck(r: CheckRow) {
  return {
    checked_at: iso(r.checked_at)!,
    ok: r.ok,
    status: r.status,
    latency_ms: round(r.latency_ms),
    components: {
      database: { ok: r.database_ok, latency_ms: round(r.latency_ms) },
      queue:
        r.queue_ok === null
          ? null
          : { ok: r.queue_ok, latency_ms: round(r.queue_latency_ms ?? 0), lag_ms: r.queue_lag_ms === null ? null : round(r.queue_lag_ms) },
      blobs: r.blobs_ok === null ? null : { ok: r.blobs_ok, latency_ms: round(r.blobs_latency_ms ?? 0) },
    },
  };
}

/**
 * GET /v1/status: the database and the queue checked now, the file store as its last check (if
 * recent) found it, the 24 h uptime and the last checks, newest first.
 */
export async function statusReport(app: App) {
  const [now, cluster] = await Promise.all([runChecks(app, false), citusNodes(app.platform).catch(() => null)]);
  const nodes = cluster?.length ? { ok: cluster.every((n) => n.reachable), total: cluster.length, reachable: cluster.filter((n) => n.reachable).length } : null;
  const [day] = await app.platform
    .query<{ n: number; ok: number }>(
      `select count(*)::int as n, count(*) filter (where ok)::int as ok from status_checks where checked_at > now() - interval '24 hours'`,
    )
    .catch(() => [{ n: 0, ok: 0 }]);
  const recent = await app.platform
    .query<CheckRow>(
      `select checked_at, ok, status, latency_ms, database_ok, queue_ok, queue_lag_ms, queue_latency_ms, blobs_ok, blobs_latency_ms
         from status_checks order by checked_at desc, id desc limit $1`,
      [RECENT],
    )
    .catch(() => []);
  const lastBlobs = recent.find((r) => r.blobs_ok !== null && new Date(r.checked_at).getTime() > Date.now() - BLOBS_FRESH_MINUTES * 60_000);
  const blobs = lastBlobs ? { ok: lastBlobs.blobs_ok!, latency_ms: round(lastBlobs.blobs_latency_ms ?? 0), checked_at: iso(lastBlobs.checked_at)! } : null;
  return {
    status: overall(now.database, [now.queue, blobs && { ...blobs, error: null }, nodes && { ok: nodes.ok, latency_ms: 0, error: null }]),
    checked_at: new Date().toISOString(),
    database_latency_ms: round(now.database.latency_ms),
    components: {
      database: { ok: now.database.ok, latency_ms: round(now.database.latency_ms) },
      queue: { ok: now.queue.ok, latency_ms: round(now.queue.latency_ms), lag_ms: now.queue.lag_ms === null ? null : round(now.queue.lag_ms) },
      blobs,
      nodes,
    },
    uptime_24h: day && day.n > 0 ? Math.round((day.ok / day.n) * 10_000) / 100 : null,
    recent_checks: recent.map(publicCheck),
  };
}

import { z } from 'zod';
import type { App } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';

/*
 * Planner statistics kept fresh by the service itself: autovacuum's ANALYZE half, for servers
 * that run with autovacuum off (some managed and test setups) and for the minutes after a bulk
 * write before autovacuum's next round. Without statistics the planner took a 100k collection
 * for 16 rows and hybrid search went from 14 ms to 185 ms (docs/search.md, "Planner statistics").
 *
 * `analyze_tables` analyzes each table of the service's schema whose rows changed since its last
 * ANALYZE by more than PostgreSQL's own autovacuum rule (`autovacuum_analyze_threshold` +
 * `autovacuum_analyze_scale_factor` x rows: 50 + 10% by default, the server's settings), and does
 * nothing otherwise. It runs every minute from the crontab (any write, however small, is seen
 * within a minute), and a write of many rows also queues it to run soon after: keyed, so a load
 * of many calls queues one job, which keeps the run_at of the first write (a throttle, not a
 * debounce). While writes keep coming (50 rows or more since its previous run in this process),
 * and after its first run in a process, the job queues itself again, so a long load is checked
 * every few seconds while it goes on (analyzed each time it grew by the rule's share) and once
 * more after it ends, never only at the end, and the writes of a load's last seconds are never
 * left for the minute's run.
 */

export const analyzeJob = defineJob('analyze_tables', z.object({}).loose(), { maxAttempts: 1 });

/** A write of at least this many rows queues the check (single writes wait for the minute's run). */
export const BULK_ROWS = 50;
/** How long after a bulk write the check runs: the writes of a load arriving meanwhile share it. */
export const ANALYZE_DELAY_MS = 10_000;
const KEY = 'analyze_tables';

// Per process: the rows written to the schema's tables (inserted, updated, deleted) when the check last ran.
const lastWritten = new WeakMap<App, number>();

// Per process: when this App last queued the check. Within the delay the queued job is still
// waiting (its key holds one job), so the write skips the statement altogether.
const lastQueued = new WeakMap<App, number>();

/**
 * Called by the writes of many rows (bulk create, import, ingest, connector pages, dedup,
 * forget, archive, expiry, collection deletion) in their transaction: queues the check when
 * `rows` reaches BULK_ROWS. At most one statement per process per delay; none for small writes.
 */
export async function noteBulkWrite(q: Queryable, app: App, rows: number): Promise<void> {
  if (!app.config.autoAnalyze || rows < BULK_ROWS) return;
  const now = Date.now();
  if (now - (lastQueued.get(app) ?? -Infinity) < ANALYZE_DELAY_MS) return;
  lastQueued.set(app, now);
  await app.jobs.enqueue(q, analyzeJob, {}, { key: KEY, runAt: new Date(now + ANALYZE_DELAY_MS) });
}

/** The tables of the service's schema past autovacuum's analyze rule, with their counts. */
export async function staleTables(q: Queryable) {
  return q.query<{ table: string; modified: number; rows: number }>(
    `select s.relname as table, s.n_mod_since_analyze::float8 as modified, greatest(c.reltuples, 0)::float8 as rows
       from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.schemaname = current_schema()
        and s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
                                    + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
      order by s.n_mod_since_analyze desc`,
  );
}

/**
 * The job: analyzes every stale table (skipping one another ANALYZE or autovacuum holds), then
 * queues itself again when writes are still coming; answers the tables analyzed. A no-op when
 * ORGMEM_AUTO_ANALYZE is off.
 */
export async function analyzeStaleTables(app: App): Promise<string[]> {
  if (!app.config.autoAnalyze) return [];
  const done: string[] = [];
  for (const t of await staleTables(app.db)) {
    const started = performance.now();
    await app.db.query(`analyze (skip_locked) "${t.table.replaceAll('"', '""')}"`);
    app.log.info({ table: t.table, modified: t.modified, rows: t.rows, ms: Math.round(performance.now() - started) }, 'table analyzed');
    done.push(t.table);
  }
  const [{ written }] = (await app.db.query<{ written: number }>(
    `select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::float8 as written from pg_stat_user_tables where schemaname = current_schema()`,
  )) as [{ written: number }];
  const before = lastWritten.get(app);
  lastWritten.set(app, written);
  // The first run in a process cannot tell whether a load is still going: it checks once more.
  // Writes arriving while it waited were merged into it (one keyed job) and then skipped queuing
  // for the delay, so without that second look a load's last seconds (6,500 of 18,000 rows in a
  // 19 s load) waited for the minute's run.
  if (before === undefined || written - before >= BULK_ROWS) {
    lastQueued.set(app, Date.now());
    await app.jobs.enqueue(app.db, analyzeJob, {}, { key: KEY, runAt: new Date(Date.now() + ANALYZE_DELAY_MS) });
  }
  return done;
}

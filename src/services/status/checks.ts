import type { App } from '../../context.ts';
import { iso } from '../../ids.ts';

/** One self-check: a database round trip. Recorded every minute by the `status_check` task. */
export async function recordCheck(app: App): Promise<void> {
  const started = performance.now();
  let ok = true;
  let detail: string | null = null;
  try {
    await app.db.query('select 1');
  } catch (err) {
    ok = false;
    detail = String((err as Error).message);
  }
  await app.db.query('insert into status_checks (ok, latency_ms, detail) values ($1, $2, $3)', [ok, performance.now() - started, detail]);
  // Only the last day is ever shown; keep the table from growing without bound.
  await app.db.query(`delete from status_checks where checked_at < now() - interval '2 days'`);
}

export async function statusReport(app: App) {
  const started = performance.now();
  let live = true;
  try {
    await app.db.query('select 1');
  } catch {
    live = false;
  }
  const latency = performance.now() - started;
  const [day] = await app.db.query<{ n: number; ok: number }>(
    `select count(*)::int as n, count(*) filter (where ok)::int as ok from status_checks where checked_at > now() - interval '24 hours'`,
  ).catch(() => [{ n: 0, ok: 0 }]);
  const recent = await app.db
    .query<{ checked_at: Date; ok: boolean; latency_ms: number }>(
      'select checked_at, ok, latency_ms from status_checks order by checked_at desc limit 20',
    )
    .catch(() => []);
  return {
    status: live ? ('operational' as const) : ('down' as const),
    checked_at: new Date().toISOString(),
    database_latency_ms: Math.round(latency * 100) / 100,
    uptime_24h: day && day.n > 0 ? Math.round((day.ok / day.n) * 10_000) / 100 : null,
    recent_checks: recent.map((r) => ({ checked_at: iso(r.checked_at)!, ok: r.ok, latency_ms: Math.round(r.latency_ms * 100) / 100 })),
  };
}

/**
 * The operator's reporting window: the last `days` whole UTC days, today included (days=7: today
 * and the six days before it), so totals and per-day lists count the same rows. `$n` is the
 * query parameter holding `days`.
 */
export const windowStart = (n: number) => `((date_trunc('day', now() at time zone 'UTC') - make_interval(days => $${n}::int - 1)) at time zone 'UTC')`;

/** The window's days, oldest first, as YYYY-MM-DD (UTC). */
export function windowDays(days: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** Per-day counts over the whole window, days without rows as 0. */
export function byDay(days: number, rows: Array<{ day: string; n: number }>): Array<{ day: string; n: number }> {
  const counts = new Map(rows.map((r) => [r.day, r.n]));
  return windowDays(days).map((day) => ({ day, n: counts.get(day) ?? 0 }));
}

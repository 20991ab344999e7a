import type { App } from '../../core/context.ts';
import { byDay, windowStart } from './window.ts';

const TOP = 20;

/**
 * The sign-up funnel and the public pages' traffic over the window. Sign-ups and reveals are read
 * from the audit log (`account.signup`, `account.reveal` of a signup link), which keeps them as
 * long as their tenant exists; reveal links themselves are pruned a week after they expire.
 * Tenants created counts every tenant made in the window, by sign-up or by an operator. A
 * sign-up to an address that already has an account stores nothing and is not counted.
 */
export async function analytics(app: App, days: number) {
  const since = windowStart(1);
  const day = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD')`;
  const [[funnel], signups, views, paths, referrers] = await Promise.all([
    app.platform.query<{ pageviews: number; signups_requested: number; tenants_created: number; keys_revealed: number }>(
      `select (select count(*)::int from pageviews where at >= ${since}) as pageviews,
              (select count(*)::int from audit_log where action = 'account.signup' and at >= ${since}) as signups_requested,
              (select count(*)::int from tenants where created_at >= ${since}) as tenants_created,
              (select count(*)::int from audit_log where action = 'account.reveal' and detail->>'purpose' = 'signup' and at >= ${since}) as keys_revealed`,
      [days],
    ),
    app.platform.query<{ day: string; n: number }>(
      `select ${day('at')} as day, count(*)::int as n from audit_log where action = 'account.signup' and at >= ${since} group by 1`,
      [days],
    ),
    app.platform.query<{ day: string; n: number }>(`select ${day('at')} as day, count(*)::int as n from pageviews where at >= ${since} group by 1`, [days]),
    app.platform.query<{ path: string; views: number }>(
      `select path, count(*)::int as views from pageviews where at >= ${since} group by path order by views desc, path limit ${TOP}`,
      [days],
    ),
    app.platform.query<{ referrer: string | null; views: number }>(
      `select referrer, count(*)::int as views from pageviews where at >= ${since} group by referrer order by views desc, referrer nulls first limit ${TOP}`,
      [days],
    ),
  ]);
  return {
    days,
    funnel: funnel!,
    signups_by_day: byDay(days, signups).map(({ day, n }) => ({ day, signups: n })),
    pageviews_by_day: byDay(days, views).map(({ day, n }) => ({ day, views: n })),
    top_paths: paths,
    top_referrers: referrers,
  };
}

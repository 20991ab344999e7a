import type { App } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { Queryable } from '../../ports/db/db.ts';

/** One hit on a fixed-window counter: the count in the current window and when it ends. */
export interface RateHit {
  count: number;
  /** Unix seconds at which the window ends and the count starts again. */
  reset_at: number;
}

/**
 * SQL of one hit as a single upsert, so a counter shared by every API process costs one
 * statement. Windows are aligned on the database clock (multiples of `windowParam` seconds
 * since the epoch); a row from an older window restarts at the hit's weight. `source` is an
 * optional `from ... where ...` clause that the bucket expression reads from; `weightExpr` how many
 * calls the hit counts (a batch of calls counts each, docs/contract.md "Rate limits").
 */
export function hitSql(bucketExpr: string, windowParam: string, source = '', weightExpr = '1'): string {
  return `insert into rate_limits (bucket, window_start, count)
    select ${bucketExpr}, to_timestamp((floor(extract(epoch from now()) / ${windowParam}::int) * ${windowParam}::int)::float8), ${weightExpr} ${source}
    on conflict (bucket) do update
       set count = case when rate_limits.window_start = excluded.window_start then rate_limits.count + excluded.count else excluded.count end,
           window_start = excluded.window_start
    returning count, extract(epoch from window_start)::float8 + ${windowParam}::int as reset_at`;
}

let storeFailures = 0;

/** How often the limiter's store failed in this process (the limiter then lets requests pass). */
export const rateLimitStoreFailures = () => storeFailures;

/** The limiter fails open: a broken store must not take the API down with it. */
export function limiterFailed(app: App, err: unknown): void {
  storeFailures++;
  app.log.warn({ err, failures: storeFailures }, 'rate limiter store failed; request let through');
}

/** Hits `bucket`; null when the store failed (fail open). */
export async function hit(app: App, q: Queryable, bucket: string, windowSeconds: number): Promise<RateHit | null> {
  try {
    const [row] = await q.query<RateHit>(hitSql('$1::text', '$2'), [bucket, windowSeconds]);
    return row!;
  } catch (err) {
    limiterFailed(app, err);
    return null;
  }
}

/**
 * Writes the RateLimit-* headers of `hit` into `headers` (when given) and answers how many of the
 * hit's `calls` fit in the window under `limit`, the first ones; none fitting is a 429 with Retry-After.
 */
export function enforce(headers: Record<string, string> | null, limit: number, h: RateHit | null, what = 'API key', calls = 1): number {
  if (!h) return calls;
  if (headers) {
    headers['RateLimit-Limit'] = String(limit);
    headers['RateLimit-Remaining'] = String(Math.max(0, limit - h.count));
    headers['RateLimit-Reset'] = String(Math.round(h.reset_at));
  }
  const within = Math.max(0, Math.min(calls, limit - (h.count - calls)));
  if (!within) throw rateLimited(limit, h, what);
  return within;
}

/** The refusal of a call over `limit`, with Retry-After: the whole request's, or one call's of a batch. */
export function rateLimited(limit: number, h: RateHit, what = 'API key'): AppError {
  const retryAfter = Math.max(1, Math.ceil(h.reset_at - Date.now() / 1000));
  return new AppError('TOO_MANY_REQUESTS', `Rate limit of ${limit} calls per window exceeded for this ${what}; retry in ${retryAfter} s`, undefined, {
    'Retry-After': String(retryAfter),
  });
}

/** Windows long past are never read again; the hourly sweep drops them. */
export async function dropOldWindows(q: Queryable): Promise<void> {
  await q.query(`delete from rate_limits where window_start < now() - interval '2 hours'`);
}

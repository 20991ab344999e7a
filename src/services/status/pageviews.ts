import type { App } from '../../core/context.ts';

/** The cookieless beacon's record: a path and a referrer, no IP, no cookie, no tenant. */
export async function recordPageview(app: App, path: string, referrer: string | null): Promise<void> {
  await app.platform.query('insert into pageviews (path, referrer) values ($1, $2)', [path, referrer]);
}

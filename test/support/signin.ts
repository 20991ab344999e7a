import { call, type Res } from './client.ts';

/** Cookies per host, as a browser keeps them (name=value only: the tests need no more). */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();

  store(url: string, res: Response): void {
    const host = new URL(url).host;
    const cookies = this.jar.get(host) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const value = pair!.slice(at + 1);
      if (/max-age=0/i.test(line) || value === '') cookies.delete(pair!.slice(0, at));
      else cookies.set(pair!.slice(0, at), value);
    }
    this.jar.set(host, cookies);
  }

  header(url: string): string {
    return [...(this.jar.get(new URL(url).host) ?? [])].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).host)?.get(name);
  }
}

/**
 * Follows redirects by hand from `start` as a browser would (keeping each host's cookies) and
 * answers the last response and every URL visited; stops at a URL for which `stop` holds.
 */
export async function browse(start: string, jar: CookieJar, stop: (url: URL) => boolean = () => false): Promise<{ res: Response; visited: string[] }> {
  const visited: string[] = [];
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    visited.push(url);
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header(url), accept: 'text/html' } });
    jar.store(url, res);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return { res, visited };
    await res.body?.cancel();
    const next = new URL(location, url);
    if (stop(next)) return { res, visited: [...visited, next.href] };
    url = next.href;
  }
  throw new Error(`too many redirects from ${start}`);
}

/** A call made with a session cookie (and, given, its CSRF token), as the dashboard makes it. */
export function withSession<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  session: { cookie: string; csrf?: string },
  body?: unknown,
): Promise<Res<T>> {
  const headers: Record<string, string> = { cookie: `orgmem_session=${session.cookie}` };
  if (session.csrf !== undefined) headers['x-orgmem-csrf'] = session.csrf;
  return call<T>(baseUrl, method, path, { headers, body });
}

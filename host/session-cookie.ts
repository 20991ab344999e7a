import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { procedures } from '../procedures/index.ts';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { MCP_PATH } from '../src/core/oauth-urls.ts';
import { sendError } from '../src/pipeline/http-errors.ts';
import { sessionCsrf } from '../src/services/access/sessions.ts';

/*
 * A signed-in person's cookie as the API's credential (docs/sign-in.md, "Cookies and CSRF"): one
 * hook, before every route. A call to an authenticated procedure (REST or tRPC) or to the MCP
 * endpoint that has no Authorization header but the session cookie is authenticated as that
 * session only when it carries the session's CSRF token in X-Orgmem-CSRF; without it, 403. A page
 * of another site can make the browser send the cookie, never read the token, so every form and
 * mutation the cookie authenticates is one the dashboard made.
 */

export const SESSION_COOKIE = 'orgmem_session';
export const CSRF_HEADER = 'x-orgmem-csrf';

/** One cookie of the Cookie header, or undefined. */
export function cookieOf(req: FastifyRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Whether the two tokens are the same, in time independent of where they differ. */
export function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const restRoutes = new Map(procedures.map((p) => [`${p.rest.method} ${p.rest.path.replace(/\{(\w+)\}/g, ':$1')}`, p]));
const byName = new Map(procedures.map((p) => [p.name, p]));

/**
 * Whether the request is one the cookie may authenticate: the MCP endpoint, or an authenticated
 * procedure. Public procedures (the beacon, sign-up, the status page) and the routes that are no
 * procedure (files' signed links, OAuth's own endpoints, the dashboard) never read it.
 */
function takesSession(req: FastifyRequest): boolean {
  const path = req.url.split('?')[0]!;
  if (path === MCP_PATH) return true;
  if (path.startsWith('/trpc/')) {
    const names = decodeURIComponent(path.slice('/trpc/'.length)).split(',');
    return names.some((n) => (byName.get(n)?.access ?? 'public') !== 'public');
  }
  const proc = restRoutes.get(`${req.method === 'HEAD' ? 'GET' : req.method} ${req.routeOptions.url}`);
  return !!proc && proc.access !== 'public';
}

export function registerSessionCookie(server: FastifyInstance, app: App): void {
  server.addHook('onRequest', async (req, reply) => {
    if (req.headers.authorization !== undefined) return;
    const token = cookieOf(req, SESSION_COOKIE);
    if (!token || !takesSession(req)) return;
    const csrf = await sessionCsrf(app, token);
    // An ended session goes on as its token, which authentication refuses with 401 saying so.
    const given = req.headers[CSRF_HEADER];
    if (csrf !== null && !sameToken(typeof given === 'string' ? given : undefined, csrf)) {
      return sendError(
        reply,
        new AppError(
          'FORBIDDEN',
          'CSRF check failed: a call signed in by the session cookie must carry the X-Orgmem-CSRF header that GET /v1/auth/session gives',
        ),
      );
    }
    req.headers.authorization = `Bearer ${token}`;
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { oauthUrls } from '../src/core/oauth-urls.ts';
import { sendError } from '../src/pipeline/http-errors.ts';
import { endSession, sessionCsrf, SESSION_SECONDS } from '../src/services/access/sessions.ts';
import { sessionView } from '../src/services/people/session-view.ts';
import { finishSignin, startSignin } from '../src/services/people/signin.ts';
import { cookieOf, CSRF_HEADER, sameToken, SESSION_COOKIE } from './session-cookie.ts';

/*
 * Sign-in with the tenant's OpenID Connect provider (docs/sign-in.md): the start, the provider's
 * callback, the session the dashboard reads and signing out. The flow is the people service's
 * (services/people/signin.ts); here are the HTTP parts: the redirects, the cookie and where a
 * refusal goes.
 */

export const CALLBACK_PATH = '/v1/auth/oidc/callback';
/** The dashboard's sign-in page, where a refused sign-in is shown with its reason. */
const SIGNIN_PAGE = '/';

/** This server's base URL as clients reach it (ORGMEM_PUBLIC_URL, or an allowed Host: core/oauth-urls.ts). */
function baseOf(app: App, req: FastifyRequest): string {
  const urls = oauthUrls(app.config, req);
  if (urls instanceof AppError) throw urls;
  return urls.issuer;
}

/** A browser (it asked for a page) is sent back to the sign-in page with the reason; an API caller gets the error as `{detail}`. */
function refuse(req: FastifyRequest, reply: FastifyReply, err: unknown, app: App) {
  const e = err instanceof AppError ? err : new AppError('INTERNAL_SERVER_ERROR', 'Internal error');
  if (!(err instanceof AppError)) app.log.error({ err }, 'sign-in failed');
  if ((req.headers.accept ?? '').includes('text/html')) {
    return reply.redirect(`${SIGNIN_PAGE}?${new URLSearchParams({ signin_error: e.detail })}`, 303);
  }
  return sendError(reply, e);
}

const cookie = (value: string, base: string, maxAge: number) =>
  `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAge}${base.startsWith('https:') ? '; Secure' : ''}`;

const query = (req: FastifyRequest, name: string): string | undefined => {
  const v = (req.query as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
};

export function registerSigninRoutes(server: FastifyInstance, app: App): void {
  server.get('/v1/auth/oidc/start', async (req, reply) => {
    try {
      const base = baseOf(app, req);
      const input = { tenant: query(req, 'tenant') || undefined, email: query(req, 'email')?.trim() || undefined, return_to: query(req, 'return_to') };
      return reply.redirect(await startSignin(app, input, `${base}${CALLBACK_PATH}`), 302);
    } catch (err) {
      return refuse(req, reply, err, app);
    }
  });

  server.get(CALLBACK_PATH, async (req, reply) => {
    try {
      const base = baseOf(app, req);
      const url = new URL(`${base}${CALLBACK_PATH}`);
      url.search = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
      const signed = await finishSignin(app, url);
      reply.header('set-cookie', cookie(signed.session.token, base, SESSION_SECONDS));
      return reply.redirect(signed.return_to, 303);
    } catch (err) {
      return refuse(req, reply, err, app);
    }
  });

  server.get('/v1/auth/session', async (req, reply) => {
    const token = cookieOf(req, SESSION_COOKIE);
    const session = token ? await sessionView(app, token) : null;
    // No live session is a page's ordinary state before sign-in, not an error: 204.
    if (!session) return reply.header('cache-control', 'no-store').code(204).send();
    return reply.header('cache-control', 'no-store').send(session);
  });

  server.post('/v1/auth/signout', async (req, reply) => {
    const token = cookieOf(req, SESSION_COOKIE);
    const csrf = token ? await sessionCsrf(app, token) : null;
    if (!token || csrf === null) return sendError(reply, new AppError('UNAUTHORIZED', 'Not signed in: no live session cookie'));
    const given = req.headers[CSRF_HEADER];
    if (!sameToken(typeof given === 'string' ? given : undefined, csrf)) {
      return sendError(reply, new AppError('FORBIDDEN', 'CSRF check failed: signing out needs the X-Orgmem-CSRF header that GET /v1/auth/session gives'));
    }
    await endSession(app, token);
    let base = '';
    try {
      base = baseOf(app, req);
    } catch {
      // The cookie is cleared all the same; Secure only matters to set it.
    }
    return reply
      .header('set-cookie', cookie('', base, 0))
      .code(204)
      .send();
  });
}

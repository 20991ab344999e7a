import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The dashboard's build (`npm run build:web`): dist/web beside src/ and dist/'s own bundle alike. */
export const WEB_DIR = fileURLToPath(new URL('../dist/web/', import.meta.url));

/** Paths of the API: never answered with the dashboard. */
const API = /^\/(v1\/|v1$|trpc\/|openapi\.json)/;

/**
 * What a browser may do with the dashboard's pages (docs/dashboard.md, "Headers"): its own scripts,
 * styles and API only (the build has no inline script or style element; React sets styles through
 * the DOM, which a CSP allows), images from anywhere (a tenant's own bucket serves memory images),
 * and no framing by any site.
 */
export const DASHBOARD_HEADERS = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    'img-src * data: blob:',
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

/**
 * Serves the dashboard at `/`: its files as built, and index.html for any other page address
 * (`/collections/notes`), so the single-page app's links can be opened directly. Hashed assets
 * are cached for good; index.html is checked each time so a new build shows at once. Answers
 * whether the build was there to serve.
 */
export async function registerWebRoutes(server: FastifyInstance): Promise<boolean> {
  if (!existsSync(`${WEB_DIR}index.html`)) return false;
  server.addHook('onSend', async (req, reply) => {
    if (!API.test(req.url)) reply.headers(DASHBOARD_HEADERS);
  });
  await server.register(fastifyStatic, {
    root: WEB_DIR,
    wildcard: false,
    setHeaders: (res, path) => res.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'),
  });
  // Browsers and crawlers ask for /favicon.ico whatever index.html links: the same icon answers.
  server.get('/favicon.ico', (_req, reply) => reply.sendFile('favicon.svg'));
  return true;
}

/** A GET for a page of the app (not the API, not a file): index.html. */
export function isAppPage(req: FastifyRequest): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && !API.test(req.url) && !/\.[a-z0-9]+$/i.test(req.url.split('?')[0]!);
}

export const sendAppPage = (reply: FastifyReply) => reply.header('cache-control', 'no-cache').sendFile('index.html');

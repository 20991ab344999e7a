import { callMarks } from '../src/pipeline/call-headers.ts';
import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify';
import fastifyMultipart from '@fastify/multipart';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { registerMcpHttp } from '../mcp/http.ts';
import { openApiDocument } from '../rest-adapter/openapi.ts';
import { registerRestRoutes } from '../rest-adapter/routes.ts';
import { appRouter } from '../trpc/router.ts';
import { registerBlobRoutes } from './blob-routes.ts';
import { registerOAuthRoutes } from './oauth-routes.ts';
import { registerSessionCookie } from './session-cookie.ts';
import { registerSigninRoutes } from './signin-routes.ts';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { answerClientError, MAX_HEADER_BYTES, sendError, UnreadableBody } from '../src/pipeline/http-errors.ts';
import { isAppPage, registerWebRoutes, sendAppPage } from './web-routes.ts';

// Bulk create carries up to 100 texts of 10,000 characters plus metadata.
const BODY_LIMIT = 8 * 1024 * 1024;

/**
 * Every error that reaches fastify's handlers as `{detail}`: ours as they are, fastify's own (a
 * path that cannot be decoded, a body that does not match its length...) as the client's fault.
 */
function answerError(err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply) {
  // A route of the chat proxies answers in its API's envelope too (rest-adapter/options.ts).
  const send = (answer: AppError) => sendError(reply, answer, req.routeOptions?.config?.errorEnvelope);
  if (err instanceof AppError) return send(err);
  if (err.code === 'FST_ERR_BAD_URL') return send(new AppError('BAD_REQUEST', 'Malformed URL: the path holds an invalid percent-encoding'));
  const status = err.statusCode ?? 500;
  if (status === 413) return send(new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${req.routeOptions.bodyLimit ?? BODY_LIMIT} bytes`));
  if (status >= 400 && status < 500) return send(new AppError('BAD_REQUEST', err.message));
  req.log.error({ err }, 'unhandled error');
  return send(new AppError('INTERNAL_SERVER_ERROR', 'Internal error'));
}

/** The HTTP server: REST /v1 + /openapi.json, tRPC at /trpc, MCP at /v1/mcp with its OAuth server (/oauth, /.well-known), sign-in with OpenID Connect (/v1/auth), the local store's file links at /v1/blobs and the dashboard at /. */
export async function buildServer(app: App): Promise<FastifyInstance> {
  const server: FastifyInstance = Fastify({
    loggerInstance: app.log as FastifyBaseLogger,
    // Per-request lines would drown everything else; metrics cover request counts.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // A path parameter is judged by its schema whatever its length: a long collection name is 422
    // like any bad name, a long id 404 like any unknown one (docs/contract.md, "Conventions"), where the router's
    // default limit (100) would answer 414 first. The request line counts against Node's header
    // limit, so no parameter can be longer than that, and a longer URL is a 431 (below).
    routerOptions: { maxParamLength: MAX_HEADER_BYTES },
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    frameworkErrors: answerError,
    // Requests Node's parser refuses before fastify sees them (headers over the limit...).
    clientErrorHandler: answerClientError,
  });

  // Our own JSON parser: a malformed body reaches the route marked unreadable, which answers
  // 400 {detail} (or, for the beacon, 204 all the same).
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    // A route that checks a signature over the exact bytes (`rawBody` in rest-adapter/options.ts: Stripe's webhook)
    // gets the text as it arrived; parsing it here and serializing it again would not give it back.
    if (req.routeOptions.config?.rawBody) return done(null, body);
    if (!body) return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(null, new UnreadableBody('Malformed JSON body'));
    }
  });
  // A body in any other content type reaches the route marked unreadable too.
  const unsupported = (req: FastifyRequest, tolerated?: unknown) =>
    new UnreadableBody(`Unsupported content type ${req.headers['content-type']}: send application/json`, tolerated);
  // text/plain is what navigator.sendBeacon sends: a tolerant route (the beacon) reads it, a JSON
  // text inside as JSON; to every other route it is a wrong content type.
  server.addContentTypeParser('text/plain', { parseAs: 'string' }, (req, body, done) => {
    let value: unknown = body;
    try {
      value = JSON.parse(body as string);
    } catch {
      // not JSON: the text as it is
    }
    done(null, unsupported(req, value));
  });
  server.addContentTypeParser('*', { parseAs: 'buffer' }, (req, _body, done) => done(null, unsupported(req)));

  server.setErrorHandler(answerError);
  // Before every route: a signed-in person's cookie, with its CSRF token, as the call's credential.
  registerSessionCookie(server, app);
  const web = await registerWebRoutes(server);
  server.setNotFoundHandler((req, reply) =>
    web && isAppPage(req) ? sendAppPage(reply) : sendError(reply, new AppError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`)),
  );

  // Multipart parts are read by the REST adapter as they stream (file procedures only).
  // An oversize file is cut one byte past the limit, not an error: it fails alone (docs/files.md).
  await server.register(fastifyMultipart, { throwFileSizeLimit: false });
  registerRestRoutes(server, app);
  const openapi = openApiDocument();
  server.get('/openapi.json', async () => openapi);
  await server.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: appRouter,
      createContext: ({ req, res }: { req: import('fastify').FastifyRequest; res: import('fastify').FastifyReply }) => ({
        app,
        // The origin, as REST passes it, addresses the local store's signed file links to this server.
        caller: {
          authorization: req.headers.authorization,
          ip: req.ip,
          origin: `${req.protocol}://${req.host}`,
          via: 'trpc' as const,
          ...callMarks(req.headers),
        },
        setHeaders: (headers: Record<string, string>) => void res.headers(headers),
      }),
    },
  });
  registerMcpHttp(server, app);
  await registerOAuthRoutes(server, app);
  registerSigninRoutes(server, app);
  await registerBlobRoutes(server, app);
  return server;
}

import {
  InvalidClientError,
  InvalidRequestError,
  OAuthError,
  ServerError,
  TooManyRequestsError,
  UnsupportedGrantTypeError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { redirectUriMatches } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { MCP_PATH, oauthUrls, SCOPES, type OAuthUrls } from '../src/core/oauth-urls.ts';
import { findClient, firstIssue, redirectUriProblem, registerClient, REGISTRATION_MAX_BYTES, type OAuthClient } from '../src/services/access/oauth-clients.ts';
import { enforce, hit } from '../src/services/access/rate-limit.ts';
import {
  authenticateClient,
  checkResource,
  exchangeCode,
  refreshTokens,
  requestedScopes,
  revokeToken,
  startAuthorization,
} from '../src/services/access/oauth.ts';

/*
 * orgmem's OAuth 2.1 authorization server and the discovery documents of its MCP endpoint
 * (docs/mcp.md, "Remote MCP with OAuth"): protected resource metadata (RFC 9728), authorization
 * server metadata (RFC 8414, and the OpenID discovery path), authorize, token, register (RFC 7591)
 * and revoke (RFC 7009). The protocol's shapes and errors are the MCP SDK's; the rules and the
 * storage are services/access/oauth.ts. The consent page is the dashboard's (/oauth/consent).
 */

const AUTHORIZE_PATH = '/oauth/authorize';
/** The dashboard's consent page (web/src/pages/OAuthConsent.tsx). */
const CONSENT_PATH = '/oauth/consent';

/** Each request's URLs, found before its route runs (the scope's onRequest hook). */
const requestUrls = new WeakMap<FastifyRequest, OAuthUrls>();
const urlsOf = (req: FastifyRequest): OAuthUrls => requestUrls.get(req)!;

function authorizationServerMetadata(urls: OAuthUrls): OAuthMetadata & Record<string, unknown> {
  return {
    issuer: urls.issuer,
    authorization_endpoint: `${urls.issuer}${AUTHORIZE_PATH}`,
    token_endpoint: `${urls.issuer}/oauth/token`,
    registration_endpoint: `${urls.issuer}/oauth/register`,
    revocation_endpoint: `${urls.issuer}/oauth/revoke`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

function protectedResourceMetadata(urls: OAuthUrls): OAuthProtectedResourceMetadata {
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'orgmem',
  };
}

/** An OAuth error as the protocol answers it: `{error, error_description}`, no-store; a bad client 401. */
function sendOAuthError(reply: FastifyReply, err: unknown, req: FastifyRequest, app: App) {
  if (!(err instanceof OAuthError)) {
    app.log.error({ err, url: req.url }, 'OAuth endpoint failed');
    err = new ServerError('Internal error');
  }
  const e = err as OAuthError;
  const status = e instanceof ServerError ? 500 : e instanceof InvalidClientError ? 401 : e instanceof TooManyRequestsError ? 429 : 400;
  return reply.code(status).header('cache-control', 'no-store').send(e.toResponseObject());
}

const HOUR = 3600;

/**
 * Registering is open to anyone: a budget per client address, generous because hosted MCP clients
 * register all their users from a few shared addresses (docs/mcp.md, "What happens"). Past it, the
 * limiter's refusal as an OAuth error, its Retry-After kept.
 */
async function registrationBudget(app: App, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  try {
    enforce(null, app.config.oauthRegisterPerIpPerHour, await hit(app, app.platform, `oauth-register:${req.ip}`, HOUR), 'client address');
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    reply.headers(err.headers ?? {});
    throw new TooManyRequestsError(err.detail);
  }
}

/** The form or JSON body's string fields; anything else is not a parameter. */
function paramsOf(body: unknown): Record<string, string | undefined> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]));
}

/** The client a token or revocation request authenticates as: client_secret_basic, client_secret_post or none (PKCE). */
async function requestingClient(app: App, req: FastifyRequest, params: Record<string, string | undefined>): Promise<OAuthClient> {
  let id = params.client_id;
  let secret = params.client_secret;
  const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const [user, pass] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
    id = decodeURIComponent(user ?? '');
    secret = pass === undefined ? undefined : decodeURIComponent(pass);
  }
  if (!id) throw new InvalidClientError('client_id is required');
  const client = await findClient(app, id);
  authenticateClient(client, secret);
  return client;
}

const AuthorizeParams = z.object({ client_id: z.string().min(1).max(2000), redirect_uri: z.string().max(2000).optional() });
const AuthorizeRequest = z.object({
  response_type: z.literal('code', { error: 'response_type must be "code"' }),
  code_challenge: z.string().regex(/^[A-Za-z0-9_-]{43,128}$/, 'code_challenge must be a base64url S256 challenge'),
  code_challenge_method: z.literal('S256', { error: 'code_challenge_method must be "S256"' }),
  scope: z.string().max(1000).optional(),
  state: z.string().max(2000).optional(),
  resource: z.string().max(2000).optional(),
});

/**
 * Authorization request: errors about the client or its redirect_uri are answered here (never
 * redirected to an unchecked URI); the others go back to the client's redirect_uri with `state`
 * and `iss`. A valid request is kept and the browser sent to the consent page.
 */
async function authorize(app: App, req: FastifyRequest, reply: FastifyReply) {
  const urls = urlsOf(req);
  const params = paramsOf(req.method === 'POST' ? req.body : req.query);
  let client: OAuthClient;
  let redirectUri: string;
  try {
    const parsed = AuthorizeParams.safeParse(params);
    if (!parsed.success) throw new InvalidRequestError(firstIssue(parsed.error, 'request'));
    client = await findClient(app, parsed.data.client_id);
    const asked = parsed.data.redirect_uri;
    if (asked !== undefined) {
      if (!client.redirect_uris.some((registered) => redirectUriMatches(asked, registered))) {
        throw new InvalidRequestError('redirect_uri is not one the client registered');
      }
      redirectUri = asked;
    } else if (client.redirect_uris.length === 1) redirectUri = client.redirect_uris[0]!;
    else throw new InvalidRequestError('redirect_uri is required: the client registered several');
    // A client registered before the rule was: its URI is judged again before the browser goes there.
    const problem = redirectUriProblem(redirectUri);
    if (problem) throw new InvalidRequestError(problem);
  } catch (err) {
    return sendOAuthError(reply, err, req, app);
  }
  try {
    const parsed = AuthorizeRequest.safeParse(params);
    if (!parsed.success) throw new InvalidRequestError(firstIssue(parsed.error, 'request'));
    const { code_challenge, scope, state, resource } = parsed.data;
    const id = await startAuthorization(app, client, {
      redirectUri,
      codeChallenge: code_challenge,
      state,
      scopes: requestedScopes(scope),
      resource: checkResource(urls, resource),
    });
    return reply.header('cache-control', 'no-store').redirect(`${urls.issuer}${CONSENT_PATH}?request=${encodeURIComponent(id)}`, 302);
  } catch (err) {
    if (!(err instanceof OAuthError)) return sendOAuthError(reply, err, req, app);
    const back = new URL(redirectUri);
    back.searchParams.set('error', err.errorCode);
    back.searchParams.set('error_description', err.message);
    if (typeof params.state === 'string') back.searchParams.set('state', params.state);
    back.searchParams.set('iss', urls.issuer);
    return reply.header('cache-control', 'no-store').redirect(back.href, 302);
  }
}

async function token(app: App, req: FastifyRequest, reply: FastifyReply) {
  try {
    const params = paramsOf(req.body);
    const client = await requestingClient(app, req, params);
    const urls = urlsOf(req);
    let tokens;
    if (params.grant_type === 'authorization_code') {
      if (!params.code || !params.code_verifier) throw new InvalidRequestError('code and code_verifier are required');
      tokens = await exchangeCode(app, urls, client, {
        code: params.code,
        code_verifier: params.code_verifier,
        redirect_uri: params.redirect_uri,
        resource: params.resource,
      });
    } else if (params.grant_type === 'refresh_token') {
      if (!params.refresh_token) throw new InvalidRequestError('refresh_token is required');
      tokens = await refreshTokens(app, urls, client, { refresh_token: params.refresh_token, scope: params.scope, resource: params.resource });
    } else {
      throw new UnsupportedGrantTypeError('grant_type must be authorization_code or refresh_token');
    }
    return reply.header('cache-control', 'no-store').send(tokens);
  } catch (err) {
    return sendOAuthError(reply, err, req, app);
  }
}

/** Browser-based MCP clients call the discovery documents and these endpoints from another origin. */
function allowAnyOrigin(reply: FastifyReply) {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-allow-headers', 'authorization, content-type, mcp-protocol-version');
  reply.header('access-control-allow-methods', 'GET, POST, OPTIONS');
}

export async function registerOAuthRoutes(server: FastifyInstance, app: App) {
  await server.register(async (scope) => {
    // Token, revocation and authorization requests are forms (RFC 6749).
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    // Every route here names or checks the issuer: a Host it may not come from is refused first (src/core/oauth-urls.ts).
    scope.addHook('onRequest', async (req, reply) => {
      allowAnyOrigin(reply);
      const urls = oauthUrls(app.config, req);
      if (urls instanceof AppError) throw urls;
      requestUrls.set(req, urls);
    });

    const prm = async (req: FastifyRequest) => protectedResourceMetadata(urlsOf(req));
    scope.get('/.well-known/oauth-protected-resource', prm);
    scope.get(`/.well-known/oauth-protected-resource${MCP_PATH}`, prm);
    const asm = async (req: FastifyRequest) => authorizationServerMetadata(urlsOf(req));
    scope.get('/.well-known/oauth-authorization-server', asm);
    scope.get('/.well-known/openid-configuration', asm);

    scope.get(AUTHORIZE_PATH, (req, reply) => authorize(app, req, reply));
    scope.post(AUTHORIZE_PATH, (req, reply) => authorize(app, req, reply));
    scope.post('/oauth/token', (req, reply) => token(app, req, reply));
    scope.post('/oauth/register', { bodyLimit: REGISTRATION_MAX_BYTES }, async (req, reply) => {
      try {
        await registrationBudget(app, req, reply);
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send(await registerClient(app, req.body));
      } catch (err) {
        return sendOAuthError(reply, err, req, app);
      }
    });
    scope.post('/oauth/revoke', async (req, reply) => {
      try {
        const params = paramsOf(req.body);
        const client = await requestingClient(app, req, params);
        if (!params.token) throw new InvalidRequestError('token is required');
        await revokeToken(app, client, params.token);
        return reply.header('cache-control', 'no-store').send({});
      } catch (err) {
        return sendOAuthError(reply, err, req, app);
      }
    });
    for (const path of ['/oauth/token', '/oauth/register', '/oauth/revoke', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      scope.options(path, async (_req, reply) => reply.code(204).send());
    }
    scope.options('/.well-known/oauth-protected-resource*', async (_req, reply) => reply.code(204).send());
  });
}

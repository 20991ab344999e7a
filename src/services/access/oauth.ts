import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { InvalidClientError, InvalidGrantError, InvalidScopeError, InvalidTargetError, OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, notFound } from '../../core/errors.ts';
import { MCP_PATH, SCOPES, type OAuthUrls } from '../../core/oauth-urls.ts';
import { hashKey, insertKey } from './keys.ts';
import { dropUnauthorizedClients, findClient, type OAuthClient } from './oauth-clients.ts';

/*
 * orgmem's OAuth 2.1 authorization server for its MCP endpoint (docs/mcp.md, "Remote MCP with
 * OAuth"): authorization code with PKCE (S256), tokens bound to one resource (RFC 8707), refresh
 * tokens rotated with reuse detection, revocation. A client the user approves becomes an API key
 * row of the tenant (an agent, never shown as a key): its access tokens authenticate as that key
 * in the one authentication (authenticate.ts), so its role, read-only flag, grants, rate limit
 * and revocation are the key's.
 */

const ACCESS_SECONDS = 3600;
const REFRESH_SECONDS = 30 * 24 * 3600;
const CODE_SECONDS = 300;
/** The time a person has to sign in and decide on the consent page. */
const REQUEST_SECONDS = 1800;
/** The label of an approved client's key: its name and how it came. */
const LABEL_MAX = 100;

const token = (prefix: string) => `${prefix}_${randomBytes(32).toString('base64url')}`;

/** The scopes asked: the space-separated list, each one known; none asked means all of them. */
export function requestedScopes(scope: string | undefined): string[] {
  if (!scope?.trim()) return [...SCOPES];
  const asked = [...new Set(scope.trim().split(/\s+/))];
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new InvalidScopeError(`Unknown scope ${unknown[0]} (supported: ${SCOPES.join(' ')})`);
  return asked;
}

/** The one resource tokens are issued for; another is `invalid_target` (RFC 8707). */
export function checkResource(urls: OAuthUrls, resource: string | undefined): string {
  if (resource !== undefined && resource !== urls.resource) {
    throw new InvalidTargetError(`This server issues tokens for ${urls.resource} only, not ${resource}`);
  }
  return urls.resource;
}

export interface AuthorizationAsk {
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  scopes: string[];
  resource: string;
}

/** A checked authorization request, kept until the user decides: answers its id, which the consent page is opened with. */
export async function startAuthorization(app: App, client: OAuthClient, ask: AuthorizationAsk): Promise<string> {
  // What can never be used again goes as new requests come: requests and tokens a day past their
  // end (a used code or refresh token is kept until it expires, for replay detection).
  await app.platform.query(`delete from oauth_requests where expires_at < now() - interval '1 day'`);
  await app.platform.query(`delete from oauth_tokens where expires_at < now() - interval '1 day'`);
  await dropUnauthorizedClients(app);
  const id = token('mvar');
  await app.platform.query(
    `insert into oauth_requests (id, client_id, redirect_uri, code_challenge, state, scope, resource, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
    [id, client.client_id, ask.redirectUri, ask.codeChallenge, ask.state ?? null, ask.scopes.join(' '), ask.resource, REQUEST_SECONDS],
  );
  return id;
}

interface RequestRow {
  id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  state: string | null;
  scope: string;
  resource: string;
  code_hash: string | null;
  tenant_id: string | null;
  key_id: string | null;
}

async function pendingRequest(app: App, id: string): Promise<RequestRow> {
  const [row] = await app.platform.query<RequestRow>('select * from oauth_requests where id = $1 and expires_at > now() and code_hash is null', [id]);
  if (!row) throw notFound('This authorization request is unknown, already decided or expired: start again from the client');
  return row;
}

/**
 * The client of a request, for the consent page: a metadata document that cannot be read now
 * (it was read when the request was made) is the client's server failing, a 502.
 */
async function clientOfRequest(app: App, row: RequestRow): Promise<OAuthClient> {
  try {
    return await findClient(app, row.client_id);
  } catch (err) {
    if (err instanceof OAuthError) throw new AppError('BAD_GATEWAY', err.message);
    throw err;
  }
}

/** What the consent page shows: who asks, where the answer goes, and what for. */
export async function consentView(ctx: AuthedCtx, id: string) {
  const row = await pendingRequest(ctx.app, id);
  const c = await clientOfRequest(ctx.app, row);
  return {
    client_id: row.client_id,
    client_name: c.client_name ?? row.client_id,
    ...(c.client_uri && { client_uri: c.client_uri }),
    redirect_host: new URL(row.redirect_uri).host,
    scopes: row.scope.split(' '),
  };
}

/**
 * The authorization response (RFC 9207: with `iss`), as the URL the browser is sent to. The
 * issuer is the one the request came to: the base of the resource it was checked against.
 */
function responseUrl(row: RequestRow, params: Record<string, string>) {
  const url = new URL(row.redirect_uri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (row.state !== null) url.searchParams.set('state', row.state);
  url.searchParams.set('iss', row.resource.slice(0, -MCP_PATH.length));
  return url.href;
}

/**
 * The user's decision on a request. Denied: the client hears `access_denied`. Approved: the client
 * becomes an agent key of the signed-in tenant (read-only unless `read_write`; limited to
 * `collections` when given, grants.ts; acting for the person who approved it when a person did),
 * and gets a code.
 */
export async function decide(
  ctx: AuthedCtx,
  id: string,
  decision: { approve: boolean; read_write: boolean; collections?: string[] },
): Promise<{ redirect_to: string }> {
  const row = await pendingRequest(ctx.app, id);
  if (!decision.approve) {
    await ctx.app.platform.query('delete from oauth_requests where id = $1', [id]);
    return { redirect_to: responseUrl(row, { error: 'access_denied', error_description: 'The user denied the request' }) };
  }
  const c = await clientOfRequest(ctx.app, row);
  const limit = decision.collections && [...new Set(decision.collections)];
  if (limit) {
    const found = await ctx.app.db.query<{ name: string }>('select name from collections where tenant_id = $1 and name = any($2::text[])', [
      ctx.tenant.id,
      limit,
    ]);
    const missing = limit.find((name) => !found.some((f) => f.name === name));
    if (missing !== undefined) throw notFound(`Collection "${missing}" not found`);
  }
  const readWrite = decision.read_write && row.scope.split(' ').includes('memory:write');
  const code = token('mvac');
  await ctx.app.platform.transaction(async (tx) => {
    const label = `${c.client_name ?? new URL(row.redirect_uri).host} (OAuth)`.slice(0, LABEL_MAX);
    const { row: key } = await insertKey(tx, ctx.tenant.id, label, 'agent', !readWrite, false, ctx.agent.for?.id ?? null);
    if (limit) await tx.query('update api_keys set collections = $3 where tenant_id = $1 and id = $2', [ctx.tenant.id, key.id, limit]);
    // Approved by a signed-in person, the client acts for that person (docs/people.md), never with more than their access.
    if (ctx.agent.for) await tx.query('update api_keys set person_id = $3 where tenant_id = $1 and id = $2', [ctx.tenant.id, key.id, ctx.agent.for.id]);
    const taken = await tx.query(
      `update oauth_requests set code_hash = $2, tenant_id = $3, key_id = $4, scope = $5, expires_at = now() + make_interval(secs => $6)
        where id = $1 and code_hash is null returning id`,
      [id, hashKey(code), ctx.tenant.id, key.id, readWrite ? SCOPES.join(' ') : 'memory:read', CODE_SECONDS],
    );
    if (!taken.length) throw notFound('This authorization request was decided meanwhile');
  });
  return { redirect_to: responseUrl(row, { code }) };
}

/** PKCE S256: the challenge is the base64url SHA-256 of the verifier. */
function verifierMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** A key revoked in the keys view ends everything its client holds. */
async function keyActive(app: App, tenantId: string, keyId: string): Promise<boolean> {
  const [row] = await app.platform.query<{ revoked: boolean }>('select revoked_at is not null as revoked from api_keys where tenant_id = $1 and id = $2', [
    tenantId,
    keyId,
  ]);
  return !!row && !row.revoked;
}

async function issueTokens(
  app: App,
  family: string,
  grant: { client_id: string; tenant_id: string; key_id: string; resource: string; scope: string },
): Promise<OAuthTokens> {
  const access = token('mvat');
  const refresh = token('mvrt');
  await app.platform.query(
    `insert into oauth_tokens (token_hash, kind, family, client_id, tenant_id, key_id, resource, scope, expires_at)
     values ($1, 'access', $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9)),
            ($2, 'refresh', $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $10))`,
    [hashKey(access), hashKey(refresh), family, grant.client_id, grant.tenant_id, grant.key_id, grant.resource, grant.scope, ACCESS_SECONDS, REFRESH_SECONDS],
  );
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_SECONDS, refresh_token: refresh, scope: grant.scope };
}

/** Revokes every token of a family: a replayed code or refresh token, or a revocation. */
const revokeFamily = (app: App, family: string) =>
  app.platform.query('update oauth_tokens set revoked_at = now() where family = $1 and revoked_at is null', [family]);

/**
 * The authorization_code grant: the code of this client, unexpired and unused, its PKCE verifier,
 * redirect_uri and resource as asked. The code is used once; a second use revokes what the first got.
 */
export async function exchangeCode(
  app: App,
  urls: OAuthUrls,
  client: OAuthClient,
  ask: { code: string; code_verifier: string; redirect_uri?: string; resource?: string },
): Promise<OAuthTokens> {
  const [row] = await app.platform.query<RequestRow & { used: boolean; expired: boolean }>(
    'select *, used_at is not null as used, expires_at <= now() as expired from oauth_requests where code_hash = $1 and client_id = $2',
    [hashKey(ask.code), client.client_id],
  );
  if (!row || row.expired) throw new InvalidGrantError('The authorization code is unknown, expired or not this client’s');
  if (row.used) {
    await revokeFamily(app, row.id);
    throw new InvalidGrantError('The authorization code was already used: the tokens it gave are revoked');
  }
  if (!verifierMatches(ask.code_verifier, row.code_challenge)) throw new InvalidGrantError('code_verifier does not match the code_challenge');
  if (ask.redirect_uri !== undefined && ask.redirect_uri !== row.redirect_uri)
    throw new InvalidGrantError('redirect_uri is not the one the code was issued for');
  if (ask.resource !== undefined && ask.resource !== row.resource) throw new InvalidTargetError(`The code was issued for ${row.resource}, not ${ask.resource}`);
  checkResource(urls, row.resource);
  if (!(await keyActive(app, row.tenant_id!, row.key_id!))) throw new InvalidGrantError('The access this code was for has been revoked');
  const used = await app.platform.query('update oauth_requests set used_at = now() where id = $1 and used_at is null returning id', [row.id]);
  if (!used.length) {
    await revokeFamily(app, row.id);
    throw new InvalidGrantError('The authorization code was already used: the tokens it gave are revoked');
  }
  return issueTokens(app, row.id, { client_id: client.client_id, tenant_id: row.tenant_id!, key_id: row.key_id!, resource: row.resource, scope: row.scope });
}

interface TokenRow {
  family: string;
  client_id: string;
  tenant_id: string;
  key_id: string;
  resource: string;
  scope: string;
  used: boolean;
  dead: boolean;
}

/**
 * The refresh_token grant, rotating: the token is used once and replaced by a new pair. A refresh
 * token used again (stolen, or replayed) revokes its whole family (OAuth 2.1, "Refresh Token
 * Protection"). Scopes may narrow, never widen.
 */
export async function refreshTokens(
  app: App,
  urls: OAuthUrls,
  client: OAuthClient,
  ask: { refresh_token: string; scope?: string; resource?: string },
): Promise<OAuthTokens> {
  const hash = hashKey(ask.refresh_token);
  const [row] = await app.platform.query<TokenRow>(
    `select family, client_id, tenant_id, key_id, resource, scope, used_at is not null as used,
            (revoked_at is not null or expires_at <= now()) as dead
       from oauth_tokens where token_hash = $1 and kind = 'refresh'`,
    [hash],
  );
  if (!row || row.client_id !== client.client_id) throw new InvalidGrantError('The refresh token is unknown or not this client’s');
  if (row.used) {
    await revokeFamily(app, row.family);
    throw new InvalidGrantError('The refresh token was already used: every token of this grant is revoked, authorize again');
  }
  if (row.dead) throw new InvalidGrantError('The refresh token is revoked or expired: authorize again');
  const granted = row.scope.split(' ');
  const scopes = ask.scope === undefined ? granted : requestedScopes(ask.scope);
  const beyond = scopes.filter((s) => !granted.includes(s));
  if (beyond.length) throw new InvalidScopeError(`The grant does not include ${beyond.join(' ')} (granted: ${row.scope})`);
  if (ask.resource !== undefined && ask.resource !== row.resource) throw new InvalidTargetError(`The grant is for ${row.resource}, not ${ask.resource}`);
  checkResource(urls, row.resource);
  if (!(await keyActive(app, row.tenant_id, row.key_id))) throw new InvalidGrantError('This client’s access has been revoked');
  const used = await app.platform.query(
    'update oauth_tokens set used_at = now() where token_hash = $1 and used_at is null and revoked_at is null returning family',
    [hash],
  );
  if (!used.length) {
    await revokeFamily(app, row.family);
    throw new InvalidGrantError('The refresh token was already used: every token of this grant is revoked, authorize again');
  }
  return issueTokens(app, row.family, { ...row, scope: scopes.join(' ') });
}

/** Revocation (RFC 7009): the token's whole grant ends; an unknown token, or another client's, changes nothing. */
export async function revokeToken(app: App, client: OAuthClient, presented: string): Promise<void> {
  const [row] = await app.platform.query<{ family: string }>('select family from oauth_tokens where token_hash = $1 and client_id = $2', [
    hashKey(presented),
    client.client_id,
  ]);
  if (row) await revokeFamily(app, row.family);
}

/** A client's secret compared in constant time; a public client has none to give. */
export function authenticateClient(client: OAuthClient, secret: string | undefined): void {
  if (!client.client_secret) return;
  const [a, b] = [Buffer.from(secret ?? ''), Buffer.from(client.client_secret)];
  if (!secret || a.length !== b.length || !timingSafeEqual(a, b)) throw new InvalidClientError('Client authentication failed: wrong or missing client_secret');
}

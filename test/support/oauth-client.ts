import { createHash, randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { call } from './client.ts';

/*
 * The steps of an MCP client's OAuth flow against orgmem's authorization server (docs/mcp.md,
 * "Remote MCP with OAuth"), over plain HTTP, for tests that need a token without a browser (the
 * security matrix, the refusals). The flow as a person sees it, consent page and all, is driven in
 * Chromium with the SDK's client in test/web-mcp-oauth.test.ts.
 */

export const REDIRECT = 'http://127.0.0.1:9/callback';

/** A tools/list at /v1/mcp with `token` as the bearer: 200 while the token holds, 401 once it does not. */
export const mcpPost = (url: string, token: string) =>
  call(url, 'POST', '/v1/mcp', {
    key: token,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: { accept: 'application/json, text/event-stream' },
  });

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A public client registered dynamically (RFC 7591). */
export async function registerClient(url: string, name = 'Test agent'): Promise<string> {
  const res = await call(url, 'POST', '/oauth/register', {
    body: { client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.client_id as string;
}

/**
 * A request to `url`'s server naming `host` in its Host header, which fetch does not let a caller
 * set: the status, the headers and the body (JSON when it is).
 */
export function withHost(
  url: string,
  host: string,
  method: string,
  path: string,
  opts: { body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: { ...opts.headers, host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: the text
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** GET /oauth/authorize without following the redirect: where it sends the browser. */
export async function authorizeRedirect(url: string, params: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
  const res = await fetch(`${url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

export const authorizeParams = (url: string, clientId: string, challenge: string, extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT,
  code_challenge: challenge,
  code_challenge_method: 'S256',
  state: 'st-1',
  resource: `${url}/v1/mcp`,
  ...extra,
});

/** The consent request id the authorization endpoint sent the browser to. */
export async function startRequest(url: string, clientId: string, challenge: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await authorizeRedirect(url, authorizeParams(url, clientId, challenge, extra));
  const request = res.location && new URL(res.location).searchParams.get('request');
  if (res.status !== 302 || !request) throw new Error(`authorize did not go to the consent page: ${res.status} ${res.location} ${res.body}`);
  return request;
}

/** Approves (or denies) a request as the dashboard does, with an admin key: the URL the browser goes back to. */
export async function decide(url: string, key: string, request: string, approve: boolean, readWrite = true, collections?: string[]): Promise<URL> {
  const res = await call(url, 'POST', `/v1/oauth/requests/${request}`, { key, body: { approve, read_write: readWrite, collections } });
  if (res.status !== 200) throw new Error(`decision failed: ${res.status} ${JSON.stringify(res.body)}`);
  return new URL(res.body.redirect_to);
}

export async function tokenRequest(url: string, params: Record<string, string>) {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** A client approved by `key` (read-write unless `readWrite` is false) with its first tokens. */
export async function approvedClient(url: string, key: string, opts: { readWrite?: boolean; name?: string; collections?: string[] } = {}) {
  const clientId = await registerClient(url, opts.name);
  const { verifier, challenge } = pkce();
  const request = await startRequest(url, clientId, challenge);
  const back = await decide(url, key, request, true, opts.readWrite ?? true, opts.collections);
  const tokens = await tokenRequest(url, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: back.searchParams.get('code')!,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    resource: `${url}/v1/mcp`,
  });
  if (tokens.status !== 200) throw new Error(`token request failed: ${tokens.status} ${JSON.stringify(tokens.body)}`);
  return { clientId, access: tokens.body.access_token as string, refresh: tokens.body.refresh_token as string, scope: tokens.body.scope as string };
}

/**
 * An MCP client's OAuth state, kept in memory as the SDK asks of a client (its
 * `OAuthClientProvider`); the browser step is the test's: `authorizationUrl` is where the SDK
 * would send the user. With `clientMetadataUrl`, the client is identified by that document.
 */
export class TestOAuthClient implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  constructor(
    readonly name: string,
    readonly clientMetadataUrl?: string,
  ) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' };
  }
  state() {
    return 'state-of-the-test';
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

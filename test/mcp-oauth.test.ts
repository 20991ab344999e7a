import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, type Tenant } from './support/client.ts';
import {
  approvedClient,
  authorizeParams,
  authorizeRedirect,
  decide,
  mcpPost,
  pkce,
  REDIRECT,
  registerClient,
  startRequest,
  tokenRequest,
} from './support/oauth-client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { trpcClient } from './support/transports.ts';
import type { AppRouter } from '../trpc/router.ts';

let server: TestServer;
let url: string;
let t: Tenant;

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  t = await newTenant(url, server.adminKey);
});

afterAll(async () => {
  await server?.close();
});

describe('discovery', () => {
  it('a 401 from /v1/mcp points at the protected resource metadata, which names the authorization server', async () => {
    const bare = await call(url, 'POST', '/v1/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(bare.status).toBe(401);
    const prmUrl = `${url}/.well-known/oauth-protected-resource/v1/mcp`;
    // The scopes too, for a client with no other hint of what to ask.
    expect(bare.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prmUrl}", scope="memory:read memory:write"`);
    expect(bare.headers.get('access-control-expose-headers')).toContain('www-authenticate');
    const wrong = await mcpPost(url, 'mvat_not-a-token');
    expect(wrong.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prmUrl}", scope="memory:read memory:write", error="invalid_token"`);

    for (const path of ['/.well-known/oauth-protected-resource/v1/mcp', '/.well-known/oauth-protected-resource']) {
      const prm = await call(url, 'GET', path);
      expect(prm.body).toMatchObject({ resource: `${url}/v1/mcp`, authorization_servers: [url] });
    }
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const as = await call(url, 'GET', path);
      expect(as.body).toMatchObject({
        issuer: url,
        authorization_endpoint: `${url}/oauth/authorize`,
        token_endpoint: `${url}/oauth/token`,
        registration_endpoint: `${url}/oauth/register`,
        revocation_endpoint: `${url}/oauth/revoke`,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: true,
      });
    }
  });

  it('registration answers no nulls, and refuses metadata it cannot serve', async () => {
    const res = await call(url, 'POST', '/oauth/register', { body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
    expect(res.status).toBe(201);
    expect(Object.values(res.body).filter((v) => v === null)).toEqual([]);
    expect(res.body).not.toHaveProperty('client_secret');
    const confidential = await call(url, 'POST', '/oauth/register', { body: { redirect_uris: [REDIRECT], client_name: 'Server app' } });
    expect(confidential.body.client_secret).toEqual(expect.any(String));
    for (const body of [
      { redirect_uris: ['http://evil.example/callback'] },
      { redirect_uris: [REDIRECT], grant_types: ['client_credentials'] },
      { redirect_uris: 'not a list' },
    ]) {
      const refused = await call(url, 'POST', '/oauth/register', { body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('invalid_client_metadata');
    }
  });
});

describe('collections chosen on the consent page', () => {
  it('a client limited to some collections sees and touches only those', async () => {
    const u = await newTenant(url, server.adminKey);
    for (const name of ['work', 'private']) await u.api('POST', `/v1/memory/collections/${name}/memories`, { text: `a ${name} memory` });
    const c = await approvedClient(url, u.key, { collections: ['work'] });
    const listedKeys = (await u.api('GET', '/v1/memory/keys')).body as Array<{ label: string; collections: string[] | null }>;
    expect(listedKeys.map((k) => k.collections)).toEqual([null, ['work']]);
    const client = new Client({ name: 'limited', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${c.access}` } } }));
    const text = async (name: string, args: Record<string, unknown>) => {
      const res = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> };
      return { error: !!res.isError, text: res.content[0]!.text };
    };
    expect(JSON.parse((await text('list_collections', {})).text).items.map((x: { name: string }) => x.name)).toEqual(['work']);
    expect((await text('store_memory', { collection: 'work', text: 'allowed' })).error).toBe(false);
    expect((await text('store_memory', { collection: 'private', text: 'refused' })).text).toMatch(/^403/);
    expect((await text('store_memory', { collection: 'brand-new', text: 'refused' })).text).toMatch(/^403/);
    const found = await text('search', { query: 'memory' });
    expect(JSON.parse(found.text).results.every((r: { id: string }) => r.id.startsWith('work/'))).toBe(true);
    await client.close();
    // A collection that does not exist cannot be chosen; nothing is made.
    const keys = (await u.api('GET', '/v1/memory/keys')).body.length;
    const request = await startRequest(url, await registerClient(url), pkce().challenge);
    const res = await call(url, 'POST', `/v1/oauth/requests/${request}`, { key: u.key, body: { approve: true, collections: ['nope'] } });
    expect(res.status).toBe(404);
    expect((await u.api('GET', '/v1/memory/keys')).body.length).toBe(keys);
  });
});

describe('revocation', () => {
  it('revoking a token ends its grant at once', async () => {
    const c = await approvedClient(url, t.key);
    expect((await mcpPost(url, c.access)).status).toBe(200);
    const res = await fetch(`${url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: c.clientId, token: c.refresh }),
    });
    expect(res.status).toBe(200);
    const after = await mcpPost(url, c.access);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await tokenRequest(url, { grant_type: 'refresh_token', client_id: c.clientId, refresh_token: c.refresh })).body.error).toBe('invalid_grant');
  });

  it('revoking the client in the keys view ends its tokens at once, refresh included', async () => {
    const c = await approvedClient(url, t.key, { name: 'Revoked agent' });
    const keys = await t.api('GET', '/v1/memory/keys');
    const agent = keys.body.find((k: { label: string; revoked_at: string | null }) => k.label === 'Revoked agent (OAuth)' && !k.revoked_at);
    expect((await t.api('DELETE', `/v1/memory/keys/${agent.id}`)).status).toBe(204);
    expect((await mcpPost(url, c.access)).status).toBe(401);
    expect((await tokenRequest(url, { grant_type: 'refresh_token', client_id: c.clientId, refresh_token: c.refresh })).body.error).toBe('invalid_grant');
  });
});

describe('refusals: each with its OAuth error, nothing granted', () => {
  const keyCount = async (tenant: Tenant) => (await tenant.api('GET', '/v1/memory/keys')).body.length as number;

  it('an unknown redirect_uri is answered on the spot, never redirected to', async () => {
    const clientId = await registerClient(url);
    const res = await authorizeRedirect(url, authorizeParams(url, clientId, pkce().challenge, { redirect_uri: 'https://attacker.example/cb' }));
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(JSON.parse(res.body).error).toBe('invalid_request');
    const unknown = await authorizeRedirect(url, authorizeParams(url, 'no-such-client', pkce().challenge));
    expect(unknown.status).toBe(401);
    expect(JSON.parse(unknown.body).error).toBe('invalid_client');
  });

  it('another audience: no request for it, and a token of another resource is not taken', async () => {
    const clientId = await registerClient(url);
    const res = await authorizeRedirect(url, authorizeParams(url, clientId, pkce().challenge, { resource: 'https://other.example/v1/mcp' }));
    expect(res.status).toBe(302);
    const back = new URL(res.location!);
    expect(back.searchParams.get('error')).toBe('invalid_target');
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(url);
    // A token issued through http://localhost:port is for http://localhost:port/v1/mcp: not this one.
    const other = url.replace('127.0.0.1', 'localhost');
    const c = await approvedClient(other, t.key);
    expect((await mcpPost(other, c.access)).status).toBe(200);
    const refused = await mcpPost(url, c.access);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('an access token sent to REST or tRPC is told where it is accepted, not taken for a wrong key', async () => {
    const c = await approvedClient(url, t.key);
    const detail =
      'This is an OAuth access token: it is accepted only by the MCP endpoint /v1/mcp, at the address it was issued for. REST, tRPC and the proxies take an API key (mv_...)';
    expect(await call(url, 'GET', '/v1/memory/collections', { key: c.access })).toMatchObject({ status: 401, body: { detail } });
    const trpc = await trpcClient(url, c.access)
      .collections.list.query({})
      .catch((err: unknown) => err);
    expect(trpc).toBeInstanceOf(TRPCClientError);
    expect((trpc as TRPCClientError<AppRouter>).message).toBe(detail);
    expect((trpc as TRPCClientError<AppRouter>).data?.httpStatus).toBe(401);
    // A key that is not one is still just that.
    expect((await call(url, 'GET', '/v1/memory/collections', { key: 'mv_not-a-key' })).body.detail).toBe('Invalid or revoked API key');
  });

  it('an expired access token is refused', async () => {
    const c = await approvedClient(url, t.key);
    await server.app.platform.query(`update oauth_tokens set expires_at = now() - interval '1 second' where kind = 'access' and client_id = $1`, [c.clientId]);
    const res = await mcpPost(url, c.access);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a wrong PKCE verifier gets no token, and the code is not used up by it', async () => {
    const clientId = await registerClient(url);
    const { verifier, challenge } = pkce();
    const code = (await decide(url, t.key, await startRequest(url, clientId, challenge), true)).searchParams.get('code')!;
    const wrong = await tokenRequest(url, {
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: pkce().verifier,
      redirect_uri: REDIRECT,
    });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(wrong.body).not.toHaveProperty('access_token');
    const right = await tokenRequest(url, { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT });
    expect(right.status).toBe(200);
    // A code used twice: refused, and what the first use got is revoked.
    const again = await tokenRequest(url, { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT });
    expect(again.body.error).toBe('invalid_grant');
    expect((await mcpPost(url, right.body.access_token)).status).toBe(401);
  });

  it('only S256 PKCE: a plain challenge or none goes back as invalid_request', async () => {
    const clientId = await registerClient(url);
    for (const extra of [{ code_challenge_method: 'plain' }, { code_challenge: '' }] as Record<string, string>[]) {
      const res = await authorizeRedirect(url, authorizeParams(url, clientId, pkce().challenge, extra));
      expect(new URL(res.location!).searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('a client asking more than was granted: a read-only grant cannot refresh into writing, nor write', async () => {
    const c = await approvedClient(url, t.key, { readWrite: false, name: 'Reader' });
    expect(c.scope).toBe('memory:read');
    const wider = await tokenRequest(url, { grant_type: 'refresh_token', client_id: c.clientId, refresh_token: c.refresh, scope: 'memory:read memory:write' });
    expect(wider).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
    const client = new Client({ name: 'reader', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${c.access}` } } }));
    const res = (await client.callTool({ name: 'store_memory', arguments: { collection: 'oauth', text: 'x' } })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(res.isError).toBe(true);
    expect(res.content[0]!.text).toMatch(/^403/);
    await client.close();
    // An unknown scope is refused before any consent.
    const clientId = await registerClient(url);
    const unknown = await authorizeRedirect(url, authorizeParams(url, clientId, pkce().challenge, { scope: 'memory:read admin:everything' }));
    expect(new URL(unknown.location!).searchParams.get('error')).toBe('invalid_scope');
  });

  it('a denied request answers access_denied with state and iss, and makes no agent', async () => {
    const before = await keyCount(t);
    const clientId = await registerClient(url);
    const request = await startRequest(url, clientId, pkce().challenge);
    const back = await decide(url, t.key, request, false);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(url);
    expect(back.searchParams.get('code')).toBeNull();
    expect(await keyCount(t)).toBe(before);
    // Decided: the request is gone.
    expect((await t.api('GET', `/v1/oauth/requests/${request}`)).status).toBe(404);
  });

  it('an agent key cannot approve: approving makes an identity, as creating a key does', async () => {
    const agent = await t.newKey('agent-key');
    const clientId = await registerClient(url);
    const request = await startRequest(url, clientId, pkce().challenge);
    expect((await t.api('GET', `/v1/oauth/requests/${request}`, undefined, agent.key)).body.client_name).toBe('Test agent');
    const res = await call(url, 'POST', `/v1/oauth/requests/${request}`, { key: agent.key, body: { approve: true } });
    expect(res.status).toBe(403);
    expect(await keyCount(t)).toBe((await t.api('GET', '/v1/memory/keys')).body.length);
  });

  it('a client secret is checked: a confidential client without it gets invalid_client', async () => {
    const reg = await call(url, 'POST', '/oauth/register', { body: { redirect_uris: [REDIRECT], client_name: 'Confidential' } });
    const res = await tokenRequest(url, { grant_type: 'refresh_token', client_id: reg.body.client_id, refresh_token: 'mvrt_x' });
    expect(res).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    const basic = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${reg.body.client_id}:${reg.body.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'mvrt_unknown' }),
    });
    expect(((await basic.json()) as { error: string }).error).toBe('invalid_grant');
  });
});

describe('registration upkeep', () => {
  it('registrations have a budget per client address: past it a 429 as an OAuth error, with Retry-After, and nothing stored', async () => {
    const limited = await startServer({ ORGMEM_OAUTH_REGISTER_PER_IP_PER_HOUR: '2' });
    try {
      const clients = async () => (await limited.app.platform.query<{ n: number }>('select count(*)::int as n from oauth_clients'))[0]!.n;
      const register = () => call(limited.url, 'POST', '/oauth/register', { body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
      for (let i = 0; i < 2; i++) expect((await register()).status).toBe(201);
      const before = await clients();
      const refused = await register();
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: 'too_many_requests', error_description: expect.stringContaining('client address') });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(await clients()).toBe(before);
    } finally {
      await limited.close();
    }
  });

  it('a registered client with no request and no token a week after registering is dropped when an authorization starts; the others stay', async () => {
    const db = server.app.platform;
    const age = (id: string) => db.query(`update oauth_clients set created_at = now() - interval '8 days' where id = $1`, [id]);
    const never = await registerClient(url, 'Never authorized');
    await age(never);
    const pending = await registerClient(url, 'Pending');
    await startRequest(url, pending, pkce().challenge);
    await age(pending);
    const authorized = await approvedClient(url, t.key, { name: 'Authorized' });
    await db.query('delete from oauth_requests where client_id = $1', [authorized.clientId]);
    await age(authorized.clientId);
    const recent = await registerClient(url, 'Recent');

    await startRequest(url, recent, pkce().challenge);

    const left = await db.query<{ id: string }>('select id from oauth_clients where id = any($1::text[])', [[never, pending, authorized.clientId, recent]]);
    expect(left.map((c) => c.id).sort()).toEqual([pending, authorized.clientId, recent].sort());
    const gone = await authorizeRedirect(url, authorizeParams(url, never, pkce().challenge));
    expect(gone.status).toBe(401);
    expect(JSON.parse(gone.body)).toMatchObject({ error: 'invalid_client' });
    expect((await mcpPost(url, authorized.access)).status).toBe(200);
  });
});

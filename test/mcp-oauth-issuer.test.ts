import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/client.ts';
import { approvedClient, authorizeParams, pkce, registerClient, withHost } from './support/oauth-client.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * Who names the OAuth issuer (docs/mcp.md, "Behind a proxy"): ORGMEM_PUBLIC_URL, else the Host
 * header only when it is an allowed one (ORGMEM_ALLOWED_HOSTS, by default this machine's loopback
 * names on the server's port); production mode needs ORGMEM_PUBLIC_URL. A refused Host gets a 400
 * on every OAuth route, never a document or a redirect naming it.
 */

const DISCOVERY = [
  '/.well-known/oauth-protected-resource/v1/mcp',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
];
const tools = { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) };
const mcpHeaders = (key?: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...(key && { authorization: `Bearer ${key}` }),
});

let server: TestServer;
let url: string;
let port: string;

beforeAll(async () => {
  server = await startServer({}, { worker: false });
  url = server.url;
  port = new URL(url).port;
});

afterAll(async () => {
  await server?.close();
});

/** Every OAuth route, as a request a client could send with any Host. */
async function everyRoute(base: string, host: string) {
  const clientId = await registerClient(base);
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const params = new URLSearchParams(authorizeParams(base, clientId, pkce().challenge));
  return Promise.all([
    ...DISCOVERY.map((path) => withHost(base, host, 'GET', path)),
    withHost(base, host, 'GET', `/oauth/authorize?${params}`),
    withHost(base, host, 'POST', '/oauth/authorize', { body: params.toString(), headers: form }),
    withHost(base, host, 'POST', '/oauth/token', { body: `grant_type=refresh_token&client_id=${clientId}&refresh_token=mvrt_x`, headers: form }),
    withHost(base, host, 'POST', '/oauth/register', {
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'] }),
      headers: { 'content-type': 'application/json' },
    }),
    withHost(base, host, 'POST', '/oauth/revoke', { body: `client_id=${clientId}&token=mvrt_x`, headers: form }),
  ]);
}

describe('without ORGMEM_PUBLIC_URL', () => {
  it('refuses a forged Host on every OAuth route with a 400 {detail}: no document, no redirect, nothing naming it', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `localhost:${Number(port) + 1}`, `127.0.0.1:${port}@evil.example`]) {
      for (const res of await everyRoute(url, host)) {
        expect(res.status, host).toBe(400);
        expect(res.headers.location, host).toBeUndefined();
        expect(Object.keys(res.body), host).toEqual(['detail']);
        expect(res.body.detail, host).toContain('ORGMEM_ALLOWED_HOSTS');
      }
    }
  });

  it('answers a Host of this machine on the server’s port: the discovery documents and the consent redirect name it', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      for (const path of DISCOVERY) {
        const res = await withHost(url, host, 'GET', path);
        expect(res.status, path).toBe(200);
        expect(res.body.issuer ?? res.body.authorization_servers[0]).toBe(`http://${host}`);
      }
      const origin = `http://${host}`;
      const clientId = await registerClient(url);
      const res = await withHost(url, host, 'GET', `/oauth/authorize?${new URLSearchParams(authorizeParams(origin, clientId, pkce().challenge))}`);
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(new RegExp(`^${origin.replace(/[[\].]/g, '\\$&')}/oauth/consent\\?request=`));
    }
  });

  it('at /v1/mcp a forged Host still takes API keys, and its challenge names no metadata', async () => {
    const bare = await withHost(url, 'evil.example', 'POST', '/v1/mcp', { ...tools, headers: mcpHeaders() });
    expect(bare.status).toBe(401);
    expect(bare.headers['www-authenticate']).toBe('Bearer scope="memory:read memory:write"');
    const keyed = await withHost(url, 'evil.example', 'POST', '/v1/mcp', { ...tools, headers: mcpHeaders(server.adminKey) });
    expect(keyed.status).toBe(200);
    // A token is for the MCP endpoint at the address it was issued at, not at another Host.
    const c = await approvedClient(url, server.adminKey);
    const token = await withHost(url, 'evil.example', 'POST', '/v1/mcp', { ...tools, headers: mcpHeaders(c.access) });
    expect(token.status).toBe(401);
    expect(token.body.detail).toMatch(/^This is an OAuth access token/);
  });

  it('ORGMEM_ALLOWED_HOSTS names the hosts instead of the default, each on any port unless it says one', async () => {
    const lan = await startServer({ ORGMEM_ALLOWED_HOSTS: 'memory.lan, [::1]:9' }, { worker: false });
    try {
      for (const host of ['memory.lan', 'memory.lan:8443', 'MEMORY.lan:1']) {
        const res = await withHost(lan.url, host, 'GET', '/.well-known/oauth-authorization-server');
        expect(res.status, host).toBe(200);
        expect(res.body.issuer).toBe(`http://${host}`);
      }
      for (const host of [
        new URL(lan.url).host,
        `localhost:${new URL(lan.url).port}`,
        `[::1]:${new URL(lan.url).port}`,
        'evil.example',
        'memory.lan.evil.example',
      ]) {
        expect((await withHost(lan.url, host, 'GET', '/.well-known/oauth-authorization-server')).status, host).toBe(400);
      }
    } finally {
      await lan.close();
    }
  });
});

describe('with ORGMEM_PUBLIC_URL', () => {
  it('ignores the Host header: every URL is the public one', async () => {
    const publicUrl = 'https://memory.example.com';
    const behind = await startServer({ ORGMEM_PUBLIC_URL: publicUrl }, { worker: false });
    try {
      for (const host of ['evil.example', new URL(behind.url).host]) {
        const res = await withHost(behind.url, host, 'GET', '/.well-known/oauth-authorization-server');
        expect(res.body).toMatchObject({ issuer: publicUrl, authorization_endpoint: `${publicUrl}/oauth/authorize` });
        const clientId = await registerClient(behind.url);
        const started = await withHost(
          behind.url,
          host,
          'GET',
          `/oauth/authorize?${new URLSearchParams(authorizeParams(publicUrl, clientId, pkce().challenge))}`,
        );
        expect(started.headers.location).toMatch(new RegExp(`^${publicUrl}/oauth/consent\\?request=`));
      }
    } finally {
      await behind.close();
    }
  });
});

describe('production mode', () => {
  it('refuses OAuth without ORGMEM_PUBLIC_URL, whatever the Host, and serves keys as before', async () => {
    const prod = await startServer({ ORGMEM_PRODUCTION: 'true', ORGMEM_EMBEDDER: 'hash', ORGMEM_ALLOWED_HOSTS: 'memory.lan' }, { worker: false });
    try {
      for (const host of [new URL(prod.url).host, 'memory.lan', 'evil.example']) {
        for (const path of [...DISCOVERY, '/oauth/authorize?client_id=x', '/oauth/register']) {
          const res = await withHost(prod.url, host, path === '/oauth/register' ? 'POST' : 'GET', path);
          expect(res.status, `${host} ${path}`).toBe(503);
          expect(res.body.detail).toMatch(/ORGMEM_PUBLIC_URL/);
        }
      }
      const bare = await call(prod.url, 'POST', '/v1/mcp', { body: JSON.parse(tools.body) });
      expect(bare.headers.get('www-authenticate')).toBe('Bearer scope="memory:read memory:write"');
      expect((await call(prod.url, 'GET', '/v1/memory/collections', { key: prod.adminKey })).status).toBe(200);
    } finally {
      await prod.close();
    }
  });
});

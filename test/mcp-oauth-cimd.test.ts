import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './support/build.ts';
import { call } from './support/client.ts';
import { authorizeParams, authorizeRedirect, decide, pkce, REDIRECT, TestOAuthClient } from './support/oauth-client.ts';
import { spawnedServer } from './support/spawned-server.ts';

/*
 * A client ID metadata document (docs/mcp.md, "Remote MCP with OAuth"): the client_id is an HTTPS
 * URL, here a server on 127.0.0.1 with a certificate made for the test, which the spawned
 * `orgmem serve` trusts through NODE_EXTRA_CA_CERTS (read by Node at start-up only, hence the
 * spawned server). The document is fetched by the service's checked HTTP client.
 */

const dir = mkdtempSync(join(tmpdir(), 'orgmem-cimd-'));
const documents = new Map<string, unknown>();
let docServer: https.Server;
let docBase: string;
let serve: Awaited<ReturnType<typeof spawnedServer>>;
let url: string;
let key: string;

beforeAll(async () => {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ], { stdio: 'ignore' }); // prettier-ignore
  docServer = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    const doc = documents.get(req.url ?? '');
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(doc ?? { error: 'not found' }));
  });
  await new Promise<void>((r) => docServer.listen(0, '127.0.0.1', r));
  docBase = `https://127.0.0.1:${(docServer.address() as AddressInfo).port}`;
  buildIfStale('build:js');
  // A fresh embedded directory or PostgreSQL database (TEST_DATABASE_URL), with a tenant whose first key is an admin key.
  serve = await spawnedServer({ ORGMEM_EMBEDDER: 'hash', NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') });
  url = await serve.start();
  key = serve.key;
}, 60_000);

afterAll(async () => {
  await serve?.close();
  docServer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a client ID metadata document', () => {
  it('the SDK client uses its document URL as client_id; the consent shows the document’s name; tools work', async () => {
    const clientId = `${docBase}/client.json`;
    documents.set('/client.json', { client_id: clientId, client_name: 'Document client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
    const provider = new TestOAuthClient('Document client', clientId);
    const mcpUrl = new URL(`${url}/v1/mcp`);
    await expect(
      new Client({ name: 'cimd', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(clientId);
    const res = await fetch(provider.authorizationUrl!, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const request = new URL(res.headers.get('location')!).searchParams.get('request')!;
    expect((await call(url, 'GET', `/v1/oauth/requests/${request}`, { key })).body).toMatchObject({ client_id: clientId, client_name: 'Document client' });
    const back = await decide(url, key, request, true);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await transport.finishAuth(back.searchParams.get('code')!);
    const client = new Client({ name: 'cimd', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await client.listTools()).tools.length).toBeGreaterThan(10);
    await client.close();
  });

  it('refuses a redirect_uri the document does not list, a document naming another client_id, and one that is not there', async () => {
    const clientId = `${docBase}/strict.json`;
    documents.set('/strict.json', { client_id: clientId, client_name: 'Strict', redirect_uris: [REDIRECT] });
    const wrongRedirect = await authorizeRedirect(url, authorizeParams(url, clientId, pkce().challenge, { redirect_uri: 'https://attacker.example/cb' }));
    expect(wrongRedirect.status).toBe(400);
    expect(JSON.parse(wrongRedirect.body).error).toBe('invalid_request');

    documents.set('/impostor.json', { client_id: `${docBase}/someone-else.json`, redirect_uris: [REDIRECT] });
    const impostor = await authorizeRedirect(url, authorizeParams(url, `${docBase}/impostor.json`, pkce().challenge));
    expect(impostor.status).toBe(401);
    expect(JSON.parse(impostor.body).error).toBe('invalid_client');

    // A document gone between the request and the consent: the consent page says so, nothing is approved.
    documents.set('/fleeting.json', { client_id: `${docBase}/fleeting.json`, client_name: 'Fleeting', redirect_uris: [REDIRECT] });
    const started = await authorizeRedirect(url, authorizeParams(url, `${docBase}/fleeting.json`, pkce().challenge));
    const request = new URL(started.location!).searchParams.get('request')!;
    documents.delete('/fleeting.json');
    expect((await call(url, 'GET', `/v1/oauth/requests/${request}`, { key })).status).toBe(502);
    expect((await call(url, 'POST', `/v1/oauth/requests/${request}`, { key, body: { approve: true } })).status).toBe(502);

    const missing = await authorizeRedirect(url, authorizeParams(url, `${docBase}/missing.json`, pkce().challenge));
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toMatchObject({ error: 'invalid_client', error_description: expect.stringContaining('answered 404') });
  });
});

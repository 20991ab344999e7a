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
import { listen, SECRET_PAGE } from './support/targets.ts';

/*
 * A client ID metadata document (docs/mcp.md, "Remote MCP with OAuth"): the client_id is an HTTPS
 * URL, here a server on 127.0.0.1 with a certificate made for the test, which the spawned
 * `orgmem serve` trusts through NODE_EXTRA_CA_CERTS (read by Node at start-up only, hence the
 * spawned server). The document is fetched by the service's checked HTTP client under the
 * anonymous rule, public addresses only in every mode: this default-mode server allows 127.0.0.1
 * as an operator's network (ORGMEM_ALLOW_PRIVATE_NETWORKS), and nothing else inside.
 */

const dir = mkdtempSync(join(tmpdir(), 'orgmem-cimd-'));
const documents = new Map<string, unknown>();
let docServer: https.Server;
/** An internal server, on an address this server is not allowed to reach: nothing may connect to it. */
let inside: Awaited<ReturnType<typeof listen>>;
let docBase: string;
let serve: Awaited<ReturnType<typeof spawnedServer>>;
let url: string;
let key: string;

beforeAll(async () => {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ], { stdio: 'ignore' }); // prettier-ignore
  inside = await listen('127.0.0.2');
  docServer = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    if (req.url === '/to-inside.json') return res.writeHead(302, { location: `${inside.url}/client.json` }).end();
    if (req.url === '/large.json') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ padding: 'x'.repeat(10_000) }));
    if (req.url === '/slow-body.json') return res.writeHead(200, { 'content-type': 'application/json' }).write('{"client_id": ');
    if (req.url === '/no-answer.json') return;
    if (req.url === '/forbidden.json') return res.writeHead(403, { 'content-type': 'text/plain' }).end(SECRET_PAGE);
    if (req.url === '/page.json') return res.writeHead(200, { 'content-type': 'text/html' }).end(SECRET_PAGE);
    const doc = documents.get(req.url ?? '');
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(doc ?? { error: 'not found' }));
  });
  await new Promise<void>((r) => docServer.listen(0, '127.0.0.1', r));
  docBase = `https://127.0.0.1:${(docServer.address() as AddressInfo).port}`;
  buildIfStale('build:js');
  // A fresh embedded directory or PostgreSQL database (TEST_DATABASE_URL), with a tenant whose first key is an admin key.
  serve = await spawnedServer({ ORGMEM_EMBEDDER: 'hash', NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'), ORGMEM_ALLOW_PRIVATE_NETWORKS: '127.0.0.1' });
  url = await serve.start();
  key = serve.key;
});

afterAll(async () => {
  await serve?.close();
  docServer?.closeAllConnections();
  docServer?.close();
  await inside?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The one answer to a document that could not be read, whatever the reason. */
const unusable = (clientId: string) =>
  `The client's metadata document at ${clientId} could not be used: it must answer 200 from a public address within 5 seconds, with at most 10000 bytes of JSON`;

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
    expect(JSON.parse(missing.body)).toEqual({ error: 'invalid_client', error_description: unusable(`${docBase}/missing.json`) });
  });

  it('holds a document to the bounds and redirect URIs of a registration', async () => {
    for (const [name, fields, problem] of [
      ['many', { redirect_uris: Array.from({ length: 11 }, (_, i) => `${REDIRECT}/${i}`) }, 'redirect_uris: must have at most 10 entries'],
      ['named', { client_name: 'x'.repeat(201), redirect_uris: [REDIRECT] }, 'client_name: must be at most 200 characters'],
      ['file', { redirect_uris: ['file:///etc/passwd'] }, 'redirect_uri file:///etc/passwd uses the scheme file:'],
    ] as const) {
      const clientId = `${docBase}/${name}.json`;
      documents.set(`/${name}.json`, { client_id: clientId, ...fields });
      const res = await authorizeRedirect(url, authorizeParams(url, clientId, pkce().challenge, { redirect_uri: fields.redirect_uris[0]! }));
      expect(res.status, name).toBe(401);
      expect(JSON.parse(res.body).error_description, name).toContain(problem);
    }
  });

  it('never connects inside for an anonymous caller, and tells it nothing of what an address answered', async () => {
    const port = inside.port;
    // A document that redirects inside, documents on internal addresses, the cloud metadata service.
    const refused = [
      `${docBase}/to-inside.json`,
      `https://127.0.0.2:${port}/client.json`,
      `https://[::1]:${port}/client.json`,
      'https://10.0.0.1/client.json',
      'https://169.254.169.254/latest/meta-data/client.json',
      // Reachable, but what they answered is not told: a status, a page, a size, no answer at all.
      `${docBase}/forbidden.json`,
      `${docBase}/page.json`,
      `${docBase}/large.json`,
      `${docBase}/slow-body.json`,
      `${docBase}/no-answer.json`,
    ];
    const answers = await Promise.all(refused.map((clientId) => authorizeRedirect(url, authorizeParams(url, clientId, pkce().challenge))));
    answers.forEach((res, i) => {
      expect(res.status, refused[i]).toBe(401);
      expect(JSON.parse(res.body), refused[i]).toEqual({ error: 'invalid_client', error_description: unusable(refused[i]!) });
    });
    expect(inside.connections.count).toBe(0);
  });
});

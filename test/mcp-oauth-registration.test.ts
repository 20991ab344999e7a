import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/client.ts';
import { authorizeParams, authorizeRedirect, pkce, REDIRECT } from './support/oauth-client.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * What a client may register (docs/mcp.md, "Client registration"): anyone may, and what is
 * registered is kept, so every field has a bound, the body too; and the browser is only ever sent
 * back to a redirect URI of an allowed scheme.
 */

let server: TestServer;
let url: string;

beforeAll(async () => {
  server = await startServer({}, { worker: false });
  url = server.url;
});

afterAll(async () => {
  await server?.close();
});

const register = (body: unknown) => call(url, 'POST', '/oauth/register', { body });
const clients = async () => (await server.app.platform.query<{ n: number }>('select count(*)::int as n from oauth_clients'))[0]!.n;
const long = (n: number) => 'x'.repeat(n);
/** An https URI exactly `n` characters long. */
const uriOf = (n: number, base = 'https://client.example/') => `${base}${'p'.repeat(n - base.length)}`;
const base = { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };

describe('registration limits', () => {
  it('takes every field up to its bound', async () => {
    for (const fields of [
      { client_name: long(200), redirect_uris: [uriOf(2048), ...Array.from({ length: 9 }, (_, i) => `${REDIRECT}/${i}`)], client_uri: uriOf(2048) },
      { logo_uri: uriOf(2048), tos_uri: uriOf(2048), policy_uri: uriOf(2048) },
      {
        grant_types: ['authorization_code', ...Array<string>(9).fill('refresh_token')],
        response_types: Array<string>(10).fill('code'),
        scope: long(1000),
        contacts: Array<string>(10).fill(`${long(308)}@example.com`),
        software_id: long(100),
        software_version: long(100),
      },
    ]) {
      const res = await register({ ...base, ...fields });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(201);
      expect(res.body).toMatchObject(fields);
    }
  });

  it('refuses each field past its bound, and text no column can hold, with invalid_client_metadata naming it; nothing is stored', async () => {
    const before = await clients();
    const refused: Array<[string, Record<string, unknown>]> = [
      ['client_name', { client_name: long(201) }],
      ['client_name', { client_name: 'nul \u0000 inside' }],
      ['client_name', { client_name: 'half \ud800 a pair' }],
      ['redirect_uris', { redirect_uris: [] }],
      ['redirect_uris', { redirect_uris: Array.from({ length: 11 }, (_, i) => `${REDIRECT}/${i}`) }],
      ['redirect_uris.0', { redirect_uris: [uriOf(2049)] }],
      ['redirect_uris.0', { redirect_uris: [`${REDIRECT}/\u0000`] }],
      ['grant_types', { grant_types: Array<string>(11).fill('authorization_code') }],
      ['grant_types.0', { grant_types: [long(101)] }],
      ['response_types', { response_types: Array<string>(11).fill('code') }],
      ['response_types.0', { response_types: [long(101)] }],
      ['token_endpoint_auth_method', { token_endpoint_auth_method: long(101) }],
      ['client_uri', { client_uri: uriOf(2049) }],
      ['logo_uri', { logo_uri: uriOf(2049) }],
      ['tos_uri', { tos_uri: uriOf(2049) }],
      ['policy_uri', { policy_uri: uriOf(2049) }],
      ['scope', { scope: long(1001) }],
      ['contacts', { contacts: Array<string>(11).fill('a@example.com') }],
      ['contacts.0', { contacts: [`${long(309)}@example.com`] }],
      ['software_id', { software_id: long(101) }],
      ['software_version', { software_version: long(101) }],
    ];
    for (const [field, fields] of refused) {
      const res = await register({ ...base, ...fields });
      expect(res.status, field).toBe(400);
      expect(res.body.error, field).toBe('invalid_client_metadata');
      expect(res.body.error_description, field).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
    }
    expect(await clients()).toBe(before);
  });

  it('refuses a body over 16 KB with a 413 before reading it: the 7.9 MB name, and a padded registration', async () => {
    const before = await clients();
    for (const body of [
      { ...base, client_name: long(7_900_000) },
      { ...base, padding: long(16_400) },
    ]) {
      const res = await register(body);
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ detail: 'The request body is larger than 16384 bytes' });
    }
    expect(await clients()).toBe(before);
  });

  it('keeps only the fields it uses: unknown ones, keys and software statements are neither stored nor answered', async () => {
    const res = await register({
      ...base,
      padding: long(10_000),
      jwks: { keys: [{ kty: 'oct', k: long(2000) }] },
      jwks_uri: 'https://client.example/jwks.json',
      software_statement: 'eyJ.eyJ.sig',
    });
    expect(res.status).toBe(201);
    const [row] = await server.app.platform.query<{ metadata: Record<string, unknown> }>('select metadata from oauth_clients where id = $1', [
      res.body.client_id,
    ]);
    for (const field of ['padding', 'jwks', 'jwks_uri', 'software_statement']) {
      expect(res.body, field).not.toHaveProperty(field);
      expect(row!.metadata, field).not.toHaveProperty(field);
    }
  });
});

describe('redirect URIs', () => {
  it('registers https, http to a loopback host, and native apps’ own schemes', async () => {
    for (const uri of [
      'https://claude.ai/api/mcp/auth_callback',
      'http://localhost:8976/callback',
      'http://127.0.0.1/callback',
      'http://[::1]:33418/',
      'com.example.app:/oauth2redirect',
      'cursor://anysphere.cursor-mcp/oauth/callback',
    ]) {
      const res = await register({ ...base, redirect_uris: [uri] });
      expect(res.status, uri).toBe(201);
    }
  });

  it('refuses every other scheme, http to another host, and a fragment; nothing is stored', async () => {
    const before = await clients();
    for (const uri of [
      'file:///etc/passwd',
      'blob:https://client.example/8c2d6e4e-3b1f-4a57-9f0e-4b8f3c0a1d2e',
      'data:text/html,<script>alert(1)</script>',
      'javascript:alert(1)',
      'vbscript:msgbox(1)',
      'about:blank',
      'ws://client.example/callback',
      'wss://client.example/callback',
      'ftp://client.example/callback',
      'mailto:someone@client.example',
      'chrome://settings',
      'myapp://callback',
      'http://client.example/callback',
      'http://127.0.0.1.client.example/callback',
      'https://client.example/callback#done',
      'https://client.example/callback#',
      'com.example.app:/oauth2redirect#x',
    ]) {
      const res = await register({ ...base, redirect_uris: [REDIRECT, uri] });
      expect(res.status, uri).toBe(400);
      expect(res.body.error, uri).toBe('invalid_client_metadata');
    }
    expect(await clients()).toBe(before);
  });

  it('judges a stored client’s redirect URI again at authorize time: answered on the spot, never redirected to', async () => {
    // A client registered before the rule was.
    for (const [id, uri] of [
      ['stored-file', 'file:///etc/passwd'],
      ['stored-blob', 'blob:https://client.example/8c2d6e4e'],
    ] as const) {
      await server.app.platform.query('insert into oauth_clients (id, metadata) values ($1, $2::jsonb)', [
        id,
        { client_id: id, redirect_uris: [uri], token_endpoint_auth_method: 'none' },
      ]);
      const res = await authorizeRedirect(url, authorizeParams(url, id, pkce().challenge, { redirect_uri: uri }));
      expect(res.status, uri).toBe(400);
      expect(res.location).toBeNull();
      expect(JSON.parse(res.body)).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining(uri) });
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauthProviderNames, providerSpec } from '../src/schemas/providers/index.ts';
import { GOOGLE_REFRESH_TOKEN, startOAuthFake } from './fakes/oauth.ts';
import { GDRIVE_TOKEN, startGdriveFake, type GdriveFake } from './fakes/providers/gdrive.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/** OAuth for notion, slack, gdrive and gmail against a fake of each token endpoint on 127.0.0.1. */
const SECRET = 'client-secret-0123';
const DASHBOARD = 'http://dashboard.test/connections';

let server: TestServer;
let oauth: Awaited<ReturnType<typeof startOAuthFake>>;
let drive: GdriveFake;

beforeAll(async () => {
  oauth = await startOAuthFake({ googleAccessToken: 'ya29.about-to-expire', googleRenewedToken: GDRIVE_TOKEN, clientSecret: SECRET });
  drive = await startGdriveFake();
  server = await startServer(
    {
      ORGMEM_EMBEDDER: 'hash',
      ORGMEM_SLACK_API_URL: oauth.url,
      ORGMEM_NOTION_API_URL: oauth.url,
      ORGMEM_GOOGLE_OAUTH_URL: 'https://accounts.example.test',
      ORGMEM_GOOGLE_TOKEN_URL: `${oauth.url}/token`,
      ORGMEM_GDRIVE_API_URL: drive.url,
      ORGMEM_SLACK_CLIENT_ID: 'slack-client',
      ORGMEM_SLACK_CLIENT_SECRET: SECRET,
      ORGMEM_NOTION_CLIENT_ID: 'notion-client',
      ORGMEM_NOTION_CLIENT_SECRET: SECRET,
      ORGMEM_GOOGLE_CLIENT_ID: 'google-client',
      ORGMEM_GOOGLE_CLIENT_SECRET: SECRET,
      ORGMEM_DASHBOARD_URL: DASHBOARD,
    },
    { worker: false },
  );
});
afterAll(async () => {
  await server?.close();
  await oauth?.close();
  await drive?.close();
});

async function start(t: Tenant, provider: string, query: string) {
  const res = await t.api('GET', `/v1/memory/connections/oauth/${provider}/start?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return new URL(res.body.authorize_url);
}

/** The browser coming back from the provider: the redirect is read, not followed. */
async function callback(provider: string, params: Record<string, string>) {
  const res = await fetch(`${server.url}/v1/memory/connections/oauth/${provider}/callback?${new URLSearchParams(params)}`, { redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, location: res.headers.get('location'), body: text ? JSON.parse(text) : null };
}

const credentialsOf = async (id: string) => {
  const [row] = await server.app.db.query<{ credentials: string }>('select credentials from connections where id = $1', [id]);
  return JSON.parse(server.app.secrets.decrypt(row!.credentials)) as Record<string, string>;
};

describe('connector OAuth', () => {
  it('start answers 503 naming the variables to set when the operator has not configured the provider', async () => {
    const { url, adminKey } = shared();
    const t = await newTenant(url, adminKey);
    const details: Record<string, string> = {};
    for (const provider of oauthProviderNames) {
      const res = await t.api('GET', `/v1/memory/connections/oauth/${provider}/start?collection=docs`);
      expect(res.status).toBe(503);
      const { clientId, clientSecret } = providerSpec(provider).oauth!.app;
      expect(res.body.detail).toBe(`OAuth for ${provider} is not configured on this server (the operator sets ${clientId} and ${clientSecret})`);
      details[provider] = res.body.detail;
    }
    // gdrive and gmail share Google's app.
    expect(details.gdrive).toContain('ORGMEM_GOOGLE_CLIENT_ID and ORGMEM_GOOGLE_CLIENT_SECRET');
    expect(details.gmail).toContain('ORGMEM_GOOGLE_CLIENT_ID');
    expect((await t.api('GET', '/v1/memory/connections/oauth/hubspot/start?collection=docs')).status).toBe(422);
  });

  it('notion: consent URL, then the callback stores the token sealed as a connection and redirects to the dashboard', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const authorize = await start(t, 'notion', 'collection=wiki&name=Team%20wiki&container_tag=eng');
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${oauth.url}/v1/oauth/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: 'notion-client',
      response_type: 'code',
      owner: 'user',
      redirect_uri: `${server.url}/v1/memory/connections/oauth/notion/callback`,
    });
    const state = authorize.searchParams.get('state')!;
    expect(state).not.toContain(t.id);
    const back = await callback('notion', { code: 'good-code', state });
    expect(back.status).toBe(302);
    const location = new URL(back.location!);
    expect(`${location.origin}${location.pathname}`).toBe(DASHBOARD);
    expect(location.searchParams.get('provider')).toBe('notion');
    const id = location.searchParams.get('connection')!;
    const conn = await t.api('GET', `/v1/memory/connections/${id}`);
    expect(conn.body).toMatchObject({ provider: 'notion', collection: 'wiki', name: 'Team wiki', container_tag: 'eng', status: 'active' });
    expect(JSON.stringify(conn.body)).not.toContain('secret_from-oauth');
    expect(await credentialsOf(id)).toEqual({ token: 'secret_from-oauth' });
    const exchange = oauth.requests.at(-1)!;
    expect(exchange).toMatchObject({
      path: '/v1/oauth/token',
      params: { grant_type: 'authorization_code', code: 'good-code', redirect_uri: `${server.url}/v1/memory/connections/oauth/notion/callback` },
    });
    expect(exchange.authorization).toBe(`Basic ${Buffer.from(`notion-client:${SECRET}`).toString('base64')}`);
    // The state is not a ticket for a second connection once used at the provider: the code is spent there.
  });

  it('a tampered, foreign, missing or expired state is refused and creates nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const state = (await start(t, 'slack', `collection=chat&config=${encodeURIComponent(JSON.stringify({ channel_id: 'C1' }))}`)).searchParams.get('state')!;
    const flipped = state.slice(0, -3) + (state.at(-3) === 'A' ? 'B' : 'A') + state.slice(-2);
    const expired = server.app.secrets.encrypt(
      JSON.stringify({
        provider: 'slack',
        tenant_id: t.id,
        agent_id: (await t.api('GET', '/v1/memory/agents')).body[0].id,
        collection: 'chat',
        name: null,
        container_tag: null,
        config: { channel_id: 'C1' },
        expires_at: Date.now() - 1000,
      }),
    );
    for (const [provider, params, reason] of [
      ['slack', { code: 'good-code', state: flipped }, /invalid/],
      ['notion', { code: 'good-code', state }, /invalid/],
      ['slack', { code: 'good-code' }, /missing/],
      ['slack', { code: 'good-code', state: expired }, /expired/],
    ] as const) {
      const res = await callback(provider, params);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(reason);
    }
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([]);
    // The same state is good until then.
    const ok = await callback('slack', { code: 'good-code', state });
    expect(ok.status).toBe(302);
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([expect.objectContaining({ provider: 'slack', config: { channel_id: 'C1' } })]);
  });

  it('a declined consent or a refused code comes back to the dashboard with the reason, and stores nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const config = encodeURIComponent(JSON.stringify({ channel_id: 'C1' }));
    const declined = await callback('slack', {
      error: 'access_denied',
      state: (await start(t, 'slack', `collection=c&config=${config}`)).searchParams.get('state')!,
    });
    expect(new URL(declined.location!).searchParams.get('oauth_error')).toBe('access_denied');
    const refused = await callback('slack', {
      code: 'stale-code',
      state: (await start(t, 'slack', `collection=c&config=${config}`)).searchParams.get('state')!,
    });
    expect(refused.status).toBe(302);
    expect(new URL(refused.location!).searchParams.get('oauth_error')).toMatch(/invalid_code/);
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([]);
    // Slack needs a channel: a start without one is refused before the person is sent away.
    const noChannel = await t.api('GET', '/v1/memory/connections/oauth/slack/start?collection=c');
    expect(noChannel.status).toBe(422);
    expect(noChannel.body.errors[0].path).toBe('config.channel_id');
  });

  it('a token endpoint answering something that is not a token answer comes back to the dashboard with the reason, and stores nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const cases: Array<[string, string, string]> = [
      ['slack', 'null', "slack's token endpoint answered null, not a token answer"],
      ['slack', '"ok"', "slack's token endpoint answered a string, not a token answer"],
      ['notion', '[{"access_token":"x"}]', "notion's token endpoint answered a list, not a token answer"],
      ['notion', '{"access_token":42}', "notion's token endpoint answered an object whose access_token is not valid, not a token answer"],
      ['gdrive', '{"access_token":"x","expires_in":"soon"}', "gdrive's token endpoint answered an object whose expires_in is not valid, not a token answer"],
      ['gdrive', '{"access_token":"x","expires_in":1e300}', "gdrive's token endpoint answered an object whose expires_in is not valid, not a token answer"],
    ];
    for (const [provider, answer, reason] of cases) {
      const query = provider === 'slack' ? `collection=c&config=${encodeURIComponent(JSON.stringify({ channel_id: 'C1' }))}` : 'collection=c';
      const back = await callback(provider, { code: `answer:${answer}`, state: (await start(t, provider, query)).searchParams.get('state')! });
      expect(back.status, answer).toBe(302);
      expect(new URL(back.location!).searchParams.get('oauth_error'), answer).toBe(reason);
    }
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([]);
  });

  it('the callback acts as the agent that started: refused with the reason, before the code is exchanged, once its grant or key is gone', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const config = encodeURIComponent(JSON.stringify({ channel_id: 'C1' }));
    const startAs = async (key: string, collection: string) => {
      const res = await t.api('GET', `/v1/memory/connections/oauth/slack/start?collection=${collection}&config=${config}`, undefined, key);
      expect(res.status).toBe(200);
      return new URL(res.body.authorize_url).searchParams.get('state')!;
    };
    const [connector, leaver, rotator] = [await t.newKey('connector'), await t.newKey('leaver'), await t.newKey('rotator')];
    const ownerId = (await t.api('GET', '/v1/memory/agents')).body.find((a: { label: string }) => a.label === 'default').id;
    expect((await t.api('POST', '/v1/memory/collections', { name: 'chat' })).status).toBe(201);
    const states = { connector: await startAs(connector.key, 'chat'), leaver: await startAs(leaver.key, 'open'), rotator: await startAs(rotator.key, 'open') };
    // While the people are at Slack: "chat" is restricted to the owner's key, leaver's key is revoked, rotator's rotated.
    expect((await t.api('PUT', '/v1/memory/collections/chat/grants', { agent_key_id: ownerId, can_read: true, can_write: true })).status).toBe(200);
    expect((await t.api('DELETE', `/v1/memory/keys/${leaver.id}`)).status).toBe(204);
    expect((await t.api('POST', '/v1/memory/admin/rotate-key', {}, rotator.key)).status).toBe(200);

    const exchanges = oauth.requests.length;
    for (const [who, reason] of [
      ['connector', 'The API key "connector" is not granted write access to collection "chat"'],
      ['leaver', 'The API key "leaver" has been revoked'],
    ] as const) {
      const back = await callback('slack', { code: 'good-code', state: states[who] });
      expect(back.status).toBe(302);
      expect(new URL(back.location!).searchParams.get('oauth_error')).toBe(reason);
    }
    expect(oauth.requests.length).toBe(exchanges);
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([]);
    // A rotated key is the same agent: its new key holds its grants, and the connection is made.
    const rotated = await callback('slack', { code: 'good-code', state: states.rotator });
    expect(new URL(rotated.location!).searchParams.get('connection')).toEqual(expect.any(String));
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([expect.objectContaining({ provider: 'slack', collection: 'open' })]);
  });

  it('gdrive and gmail: offline consent; the refresh token renews an expiring access token before the sync', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const gmail = await start(t, 'gmail', 'collection=mail');
    expect(Object.fromEntries(gmail.searchParams)).toMatchObject({
      access_type: 'offline',
      prompt: 'consent',
      scope: 'https://www.googleapis.com/auth/gmail.readonly',
    });
    const authorize = await start(t, 'gdrive', 'collection=drive');
    expect(`${authorize.origin}${authorize.pathname}`).toBe('https://accounts.example.test/o/oauth2/v2/auth');
    expect(authorize.searchParams.get('scope')).toBe('https://www.googleapis.com/auth/drive.readonly');
    const back = await callback('gdrive', { code: 'good-code', state: authorize.searchParams.get('state')! });
    const id = new URL(back.location!).searchParams.get('connection')!;
    expect(await credentialsOf(id)).toMatchObject({ token: 'ya29.about-to-expire', refresh_token: GOOGLE_REFRESH_TOKEN });

    drive.put({ title: 'Roadmap', body: 'Ship the harbour tide tables in March.' });
    const sync = await t.api('POST', `/v1/memory/connections/${id}/sync`);
    expect(sync.body).toMatchObject({ status: 'active', synced: 1 });
    const renewal = oauth.requests.at(-1)!;
    expect(renewal).toMatchObject({
      path: '/token',
      params: { grant_type: 'refresh_token', refresh_token: GOOGLE_REFRESH_TOKEN, client_id: 'google-client', client_secret: SECRET },
    });
    const renewed = await credentialsOf(id);
    expect(renewed.token).toBe(GDRIVE_TOKEN);
    expect(Date.parse(renewed.expires_at!) - Date.now()).toBeGreaterThan(50 * 60_000);
    // Not renewed again while it is fresh.
    const before = oauth.requests.length;
    expect((await t.api('POST', `/v1/memory/connections/${id}/sync`)).body.status).toBe('active');
    expect(oauth.requests.length).toBe(before);
  });
});

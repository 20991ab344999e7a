import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedures } from '../procedures/index.ts';
import { loadConfig } from '../src/core/config.ts';
import { connectionCreate, oauthProvider, provider, providerView } from '../src/schemas/connectors.ts';
import { googleApp } from '../src/schemas/providers/google.ts';
import { connectorUrls, oauthApps, oauthProviderNames, providerNames, providers } from '../src/schemas/providers/index.ts';
import { connectors } from '../src/services/connectors/providers/index.ts';
import { providerFakes } from './fakes/providers/index.ts';
import { call, newTenant, shared, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * The registry of providers (src/schemas/providers/index.ts) and what is derived from it: the
 * API's enums, the OpenAPI document, the configuration's variables, the procedures' texts, the
 * providers' answer the dashboard's form is drawn from, docs/connectors.md. Each check walks the
 * registry, so a provider added to it is checked here without editing this file.
 */
const PATH = '/v1/memory/connections/providers';
const synced = providers.filter((p) => p.sync.by === 'service').map((p) => p.name);

/** A server with Google's OAuth app configured, and no other. */
let google: TestServer;
let t: Tenant;

beforeAll(async () => {
  google = await startServer({ ORGMEM_GOOGLE_CLIENT_ID: 'google-client', ORGMEM_GOOGLE_CLIENT_SECRET: 'google-secret' }, { worker: false });
  t = await newTenant(google.url, google.adminKey);
});
afterAll(async () => {
  await google?.close();
});

const answer = async (url: string, key: string) => {
  const res = await call(url, 'GET', PATH, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return z.array(providerView).parse(res.body);
};

describe('the registry', () => {
  it('names each provider once, and each synced one has a connector and a fake', () => {
    expect(providerNames.length).toBeGreaterThan(0);
    expect(new Set(providerNames).size).toBe(providerNames.length);
    expect(Object.keys(connectors).sort()).toEqual([...synced].sort());
    expect(Object.keys(providerFakes).sort()).toEqual([...synced].sort());
    for (const name of synced) expect(connectors[name as keyof typeof connectors].name).toBe(name);
  });

  it('is the API enums', () => {
    expect(provider.options).toEqual(providerNames);
    expect(oauthProvider.options).toEqual(providers.filter((p) => p.oauth).map((p) => p.name));
    for (const name of providerNames) expect(connectionCreate.safeParse({ provider: name, collection: 'c' }).success, name).toBe(true);
    expect(connectionCreate.safeParse({ provider: 'dropbox', collection: 'c' }).success).toBe(false);
  });

  it('is the OpenAPI document', async () => {
    const doc = (await call(shared().url, 'GET', '/openapi.json')).body;
    const created = doc.paths['/v1/memory/connections'].post;
    expect(created.requestBody.content['application/json'].schema.properties.provider.enum).toEqual(providerNames);
    for (const name of providerNames) expect(created.summary).toContain(name);
    const start = doc.paths['/v1/memory/connections/oauth/{provider}/start'].get;
    expect(start.parameters.find((p: { name: string }) => p.name === 'provider').schema.enum).toEqual(oauthProviderNames);
    for (const name of oauthProviderNames) expect(start.summary).toContain(name);
    const listed = doc.paths[PATH].get.responses['200'].content['application/json'].schema;
    expect(listed.items.properties.provider.enum).toEqual(providerNames);
  });

  it("is the configuration's connector variables: each API base and OAuth URL with its default, each app's client id and secret", () => {
    const defaults = loadConfig({});
    for (const p of providers) {
      if (p.sync.by === 'service' && 'env' in p.sync.api) {
        expect(defaults.connectors.apiUrls[p.name], p.name).toBe(p.sync.api.default);
        expect(loadConfig({ [p.sync.api.env]: 'http://127.0.0.1:9/api' }).connectors.apiUrls[p.name]).toBe('http://127.0.0.1:9/api');
      } else expect(defaults.connectors.apiUrls[p.name], p.name).toBeUndefined();
    }
    for (const { env } of connectorUrls) expect(() => loadConfig({ [env]: 'not a url' })).toThrow(new RegExp(`Invalid configuration:\\n  ${env}: `));
    // No app without both its client id and secret.
    expect(Object.values(defaults.connectors.oauth).every((app) => app === null)).toBe(true);
    for (const app of oauthApps) expect(loadConfig({ [app.clientId]: 'id' }).connectors.oauth).toEqual(defaults.connectors.oauth);
    // Each app's URLs, as the providers publish them (and as config.ts had them by hand before the registry).
    const all = loadConfig(Object.fromEntries(oauthApps.flatMap((a) => [a.clientId, a.clientSecret].map((v) => [v, `${v}-value`]))));
    const urls = Object.fromEntries(Object.entries(all.connectors.oauth).map(([name, app]) => [name, [app?.authorizeUrl, app?.tokenUrl]]));
    expect(urls).toEqual({
      slack: ['https://slack.com/oauth/v2/authorize', 'https://slack.com/api/oauth.v2.access'],
      notion: ['https://api.notion.com/v1/oauth/authorize', 'https://api.notion.com/v1/oauth/token'],
      gdrive: ['https://accounts.google.com/o/oauth2/v2/auth', 'https://oauth2.googleapis.com/token'],
      gmail: ['https://accounts.google.com/o/oauth2/v2/auth', 'https://oauth2.googleapis.com/token'],
    });
    expect(all.connectors.oauth.gmail).toMatchObject({ clientId: 'ORGMEM_GOOGLE_CLIENT_ID-value', clientSecret: 'ORGMEM_GOOGLE_CLIENT_SECRET-value' });
    // Slack's token endpoint moves with its API base: one variable.
    const slack = loadConfig({ ORGMEM_SLACK_CLIENT_ID: 'a', ORGMEM_SLACK_CLIENT_SECRET: 'b', ORGMEM_SLACK_API_URL: 'http://127.0.0.1:9/api' }).connectors;
    expect([slack.apiUrls.slack, slack.oauth.slack?.tokenUrl]).toEqual(['http://127.0.0.1:9/api', 'http://127.0.0.1:9/api/oauth.v2.access']);
  });

  it("is docs/connectors.md's: each provider has its section, naming its variables and their defaults", () => {
    const readme = readFileSync(new URL('../docs/connectors.md', import.meta.url), 'utf8');
    for (const p of providers) {
      const start = readme.indexOf(`\n**${p.name}**`);
      expect(start, `docs/connectors.md has no **${p.name}** section`).toBeGreaterThan(0);
      const section = readme.slice(start, readme.indexOf('\n**', start + 1));
      const named = [...(p.sync.by === 'service' && 'env' in p.sync.api ? [p.sync.api] : []), ...(p.oauth ? [p.oauth.app.authorize, p.oauth.app.token] : [])];
      for (const u of named) expect(section, p.name).toContain(`\`${u.env}\` (\`${u.default}\`)`);
      if (p.oauth) expect(section, p.name).toContain(`\`${p.oauth.app.clientId}\`/\`_SECRET\``);
    }
  });
});

describe(`GET ${PATH}`, () => {
  it('answers every provider of the registry, in its order, with its label, whether it syncs and its fields as JSON Schema', async () => {
    const list = await answer(google.url, t.key);
    expect(list.map((p) => p.provider)).toEqual(providerNames);
    for (const [i, view] of list.entries()) {
      const spec = providers[i]!;
      expect(view).toMatchObject({ label: spec.label, synced: spec.sync.by === 'service' });
      // The schema's required fields are those the service refuses to go without.
      for (const field of ['credentials', 'config'] as const) {
        const missing = [...new Set(spec[field].safeParse({}).error?.issues.map((issue) => String(issue.path[0])))];
        expect((view[field].required as string[] | undefined) ?? [], `${spec.name} ${field}`).toEqual(missing);
      }
      if (spec.sync.by === 'service') {
        expect((view.config.properties as Record<string, unknown>).sync_interval_minutes).toMatchObject({ type: 'integer', minimum: 1 });
      }
    }
    const by = Object.fromEntries(list.map((p) => [p.provider, p]));
    expect(by.linear!.credentials).toMatchObject({
      type: 'object',
      properties: { token: { type: 'string', title: 'Linear API key', format: 'password' } },
      required: ['token'],
    });
    expect(by.confluence!.credentials.properties).toMatchObject({ email: { title: 'Atlassian email' }, api_token: { format: 'password' } });
    expect((by.confluence!.credentials.properties as Record<string, { format?: string }>).email!.format).toBeUndefined();
    expect(by.confluence!.config).toMatchObject({ properties: { base_url: { format: 'uri', title: 'Site URL' } }, required: ['base_url'] });
    expect(by.slack!.config.required).toEqual(['channel_id']);
    // postgres: stored for the tenant's own job, whatever credentials it keeps.
    expect(by.postgres).toMatchObject({ synced: false, oauth: 'none', credentials: { type: 'object' } });
    expect(by.postgres!.credentials.properties).toBeUndefined();
  });

  it('shows OAuth available for the providers whose app is configured, not_configured for the others, none where there is no OAuth', async () => {
    const list = await answer(google.url, t.key);
    for (const view of list) {
      const spec = providers.find((p) => p.name === view.provider)!;
      expect(view.oauth, view.provider).toBe(!spec.oauth ? 'none' : spec.oauth.app === googleApp ? 'available' : 'not_configured');
    }
    expect(list.filter((p) => p.oauth === 'available').map((p) => p.provider)).toEqual(['gdrive', 'gmail']);
    expect(list.find((p) => p.provider === 'notion')!.oauth).toBe('not_configured');
    expect(list.find((p) => p.provider === 'linear')!.oauth).toBe('none');
    // A server with no app configured: none available.
    const { url, adminKey } = shared();
    const bare = await answer(url, (await newTenant(url, adminKey)).key);
    expect(bare.map((p) => p.oauth)).toEqual(providers.map((p) => (p.oauth ? 'not_configured' : 'none')));
  });

  it('takes any key, read-only ones included, and no request without one', async () => {
    const reader = await t.newKey('reader', true);
    expect((await answer(google.url, reader.key)).map((p) => p.provider)).toEqual(providerNames);
    const anonymous = await call(google.url, 'GET', PATH);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.detail).toEqual(expect.any(String));
    expect((await call(google.url, 'GET', PATH, { key: 'om_not-a-key' })).status).toBe(401);
    const proc = procedures.find((p) => p.name === 'connections.providers')!;
    expect(proc).toMatchObject({ access: 'read', rest: { method: 'GET', path: PATH, status: 200 } });
  });
});

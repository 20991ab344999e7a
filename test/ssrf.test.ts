import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { BlockList } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileKey } from '../src/ports/blobs/blobs.ts';
import { outboundFetch } from '../src/ports/outbound-http.ts';
import { complete, LlmUnavailableError } from '../src/ports/llm/llm.ts';
import { anonymousRule, isPublicAddress, PrivateTargetError, targetRule, type TargetRule } from '../src/ports/public-target.ts';
import { flushWebhook } from '../src/services/events/webhook-outbox.ts';
import { storeFor } from '../src/services/storage/tenant-store.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { startFakeS3, type FakeS3 } from './fakes/s3.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { listen, OPEN, PUBLIC_ONLY, SECRET_PAGE } from './support/targets.ts';

const base = process.env.TEST_DATABASE_URL;
/** Every spelling of this machine (and of other internal networks) an attacker tried, on `port`. */
const internalUrls = (port: number) => [
  `http://127.0.0.1:${port}/`,
  `http://localhost:${port}/`,
  `http://[::1]:${port}/`,
  `http://[::127.0.0.1]:${port}/`,
  `http://[::ffff:127.0.0.1]:${port}/`,
  `http://[2002:7f00:1::]:${port}/`,
  `http://[64:ff9b::7f00:1]:${port}/`,
  `http://[2001::1]:${port}/`,
  `http://2130706433:${port}/`,
  `http://0x7f.1:${port}/`,
  `http://0177.0.0.1:${port}/`,
  `http://0.0.0.0:${port}/`,
  'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/',
  'http://10.0.0.1/',
  'http://[fc00::1]/',
  'http://[fe80::1]/',
];

const confluence = (baseUrl: string) => ({
  provider: 'confluence',
  collection: 'wiki',
  credentials: { email: 'a@example.com', api_token: 'token' },
  config: { base_url: baseUrl },
});

const bucket = (endpoint: string, s3?: FakeS3) => ({
  backend: 's3',
  endpoint_url: endpoint,
  bucket: 'tenant-bucket',
  region: 'us-east-1',
  access_key: s3?.accessKeyId ?? 'key',
  secret_key: s3?.secretAccessKey ?? 'secret',
});

describe('the address rule', () => {
  it('counts as public only the internet, not the addresses that embed or stand for an internal one', () => {
    const internal = [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '192.0.2.1',
      '::1',
      '::',
      '::7f00:1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '2002:7f00:1::',
      '64:ff9b::7f00:1',
      '64:ff9b:1::1',
      '2001::1',
      '2001:db8::1',
      'fc00::1',
      'fd00::1',
      'fe80::1',
      'ff02::1',
    ];
    const pub = ['8.8.8.8', '172.32.0.1', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450::1', '::ffff:8.8.8.8'];
    expect(internal.filter(isPublicAddress)).toEqual([]);
    expect(pub.filter((a) => !isPublicAddress(a))).toEqual([]);
  });

  it('checks the address a name resolves to when connecting, and the operator can allow a network', async () => {
    const target = await listen('127.0.0.1');
    try {
      // localhost resolves to loopback only in the socket's own lookup: the connection is refused there.
      await expect(outboundFetch(PUBLIC_ONLY)(`http://localhost:${target.port}/`)).rejects.toThrow(PrivateTargetError);
      await expect(outboundFetch(PUBLIC_ONLY)(target.url)).rejects.toThrow(/127\.0\.0\.1 is a private, loopback or other internal address/);
      expect(target.hits).toEqual([]);
      const allowed = targetRule({ targets: { publicOnly: true, allowedNetworks: ['127.0.0.0/30'] } });
      const res = await outboundFetch(allowed)(`http://localhost:${target.port}/page`);
      expect(await res.text()).toBe(SECRET_PAGE);
      expect(target.hits).toEqual(['GET /page']);
    } finally {
      await target.close();
    }
  });

  it("refuses an address anyone may name without a key (a client metadata document) in every mode, the operator's networks aside", async () => {
    const target = await listen('127.0.0.1');
    try {
      // Default mode: a tenant's rule lets every address through, the anonymous rule does not.
      const anonymous = anonymousRule({ targets: { publicOnly: false, allowedNetworks: [] } });
      for (const url of [target.url, `http://localhost:${target.port}/`]) await expect(outboundFetch(anonymous)(url)).rejects.toThrow(PrivateTargetError);
      expect(target.connections.count).toBe(0);
      const operators = anonymousRule({ targets: { publicOnly: false, allowedNetworks: ['127.0.0.1'] } });
      expect(await (await outboundFetch(operators)(target.url)).text()).toBe(SECRET_PAGE);
    } finally {
      await target.close();
    }
  });

  it('fails an LLM call whose endpoint moved to an internal address after its check as refused, without retrying it', async () => {
    const target = await listen('127.0.0.1');
    try {
      // The name passed the check when the call began, then resolved inside by the time the client connected.
      let reads = 0;
      const moved: TargetRule = {
        allowed: new BlockList(),
        get publicOnly() {
          return reads++ > 0;
        },
      };
      const endpoint = { baseUrl: `${target.url}/v1`, model: 'm', apiKey: 'k', targets: moved };
      const failed = await complete(endpoint, { messages: [{ role: 'user', content: 'hello' }] }, { timeoutMs: 5_000, maxRetries: 2 }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(LlmUnavailableError);
      expect((failed as Error).message).toMatch(/^127\.0\.0\.1 is a private, loopback or other internal address/);
      // The check, then one try: the client's two retries were not made.
      expect(reads).toBe(2);
      expect(target.hits).toEqual([]);
    } finally {
      await target.close();
    }
  });

  it('follows a GET redirect itself, each hop checked; other methods get the redirect as their answer', async () => {
    const inside = await listen('127.0.0.2');
    const hop = await listen('127.0.0.1', (req, res) => {
      const to = req.url === '/out' ? `${inside.url}/secret` : req.url === '/loop' ? '/loop' : '/landing';
      if (req.url === '/landing') return res.writeHead(200).end('landed');
      res.writeHead(302, { location: to }).end();
    });
    try {
      const onlyFirst = targetRule({ targets: { publicOnly: true, allowedNetworks: ['127.0.0.1'] } });
      expect(await (await outboundFetch(onlyFirst)(`${hop.url}/in`)).text()).toBe('landed');
      await expect(outboundFetch(onlyFirst)(`${hop.url}/out`)).rejects.toThrow(/127\.0\.0\.2 is a private/);
      const posted = await outboundFetch(OPEN)(`${hop.url}/out`, { method: 'POST', body: '{}' });
      expect(posted.status).toBe(302);
      expect(inside.hits).toEqual([]);
      // Default mode allows the internal hop.
      expect(await (await outboundFetch(OPEN)(`${hop.url}/out`)).text()).toBe(SECRET_PAGE);
      expect(inside.hits).toEqual(['GET /secret']);
      await expect(outboundFetch(OPEN)(`${hop.url}/loop`)).rejects.toThrow(/^127\.0\.0\.1:\d+ redirected more than 5 times$/);
      expect(hop.hits.filter((h) => h === 'GET /loop')).toHaveLength(6);
    } finally {
      await inside.close();
      await hop.close();
    }
  });
});

describe('production mode', () => {
  let strict: TestServer;
  let trap: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    strict = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_PRODUCTION: '1' }, { worker: false });
    trap = await listen('127.0.0.1');
  }, 60_000);
  afterAll(async () => {
    await strict?.close();
    await trap?.close();
  });

  it('refuses every internal spelling when a webhook, extraction endpoint, bucket or Confluence site is saved', async () => {
    const t = await newTenant(strict.url, strict.adminKey);
    for (const url of internalUrls(trap.port)) {
      const hook = await t.api('PUT', '/v1/memory/webhook/config', { url });
      expect([hook.status, hook.body.detail], url).toEqual([400, expect.stringMatching(/^Webhook URL refused: .*internal address/)]);
      const llm = await t.api('PUT', '/v1/memory/extraction/config', { provider: 'custom', base_url: url, model: 'm' });
      expect([llm.status, llm.body.detail], url).toEqual([400, expect.stringMatching(/^The extraction endpoint is not allowed: .*internal address/)]);
      const store = await t.api('PUT', '/v1/memory/storage/config', bucket(url));
      expect([store.status, store.body.detail], url).toEqual([400, expect.stringMatching(/^The storage endpoint is not allowed: .*internal address/)]);
      const site = await t.api('POST', '/v1/memory/connections', confluence(url.replace(/^http:/, 'https:')));
      expect([site.status, site.body.detail], url).toEqual([400, expect.stringMatching(/^The confluence base_url is not allowed: .*internal address/)]);
    }
    expect(trap.hits).toEqual([]);
    expect((await t.api('GET', '/v1/memory/webhook/config')).body.url).toBeNull();
    expect((await t.api('GET', '/v1/memory/connections')).body).toEqual([]);
  });

  it.runIf(base)('refuses every local spelling of a database, as the driver reads it, before connecting', async () => {
    const victim = `orgmem_t_victim_${randomBytes(4).toString('hex')}`;
    const admin = postgres(base!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${victim}`);
    try {
      const t = await newTenant(strict.url, strict.adminKey);
      for (const connection_string of [
        `postgres:///${victim}`,
        `postgres:///${victim}?host=/var/run/postgresql`,
        `postgres://postgres@localhost/${victim}`,
        `postgres://postgres@127.0.0.1:5432/${victim}`,
        `postgres://postgres@2130706433/${victim}`,
        `postgres://postgres@8.8.8.8,127.0.0.1/${victim}`,
        // IPv6 literals, which the driver cannot read itself, are read and checked here.
        `postgres://postgres@[::1]/${victim}`,
        `postgres://postgres@[::1]:5432/${victim}`,
        `postgres://postgres@[::ffff:127.0.0.1]/${victim}`,
        `postgres://postgres@[fd00::1]/${victim}`,
        // A percent-escaped name is unescaped as libpq does: a loopback address, a socket's directory.
        `postgres://postgres@%31%32%37.0.0.1/${victim}`,
      ]) {
        const res = await t.api('PUT', '/v1/memory/database/config', { connection_string });
        expect([res.status, res.body.detail], connection_string).toEqual([400, expect.stringMatching(/^The database address is not allowed: /)]);
      }
      const escaped = await t.api('PUT', '/v1/memory/database/config', { connection_string: `postgres://postgres@%2Fvar%2Frun%2Fpostgresql/${victim}` });
      expect([escaped.status, escaped.body.detail]).toEqual([
        400,
        "The database address is not allowed: /var/run/postgresql/.s.PGSQL.5432 is a Unix socket on this server's own machine, which this server does not connect to",
      ]);
      // Without a host the driver takes PGHOST's, here a Unix socket's directory.
      process.env.PGHOST = '/var/run/postgresql';
      try {
        const socket = await t.api('PUT', '/v1/memory/database/config', { connection_string: `postgres:///${victim}` });
        expect([socket.status, socket.body.detail]).toEqual([
          400,
          expect.stringMatching(/^The database address is not allowed: \/var\/run\/postgresql\/\.s\.PGSQL\.5432 is a Unix socket/),
        ]);
      } finally {
        delete process.env.PGHOST;
      }
      const url = new URL(base!);
      url.pathname = `/${victim}`;
      const inVictim = postgres(url.toString(), { max: 1, onnotice: () => {} });
      expect(await inVictim`select table_name from information_schema.tables where table_schema = 'public'`).toEqual([]);
      await inVictim.end();
    } finally {
      await admin.unsafe(`drop database if exists ${victim} with (force)`);
      await admin.end();
    }
  });

  it.runIf(!base)('has no tenant databases on the embedded database to refuse', async () => {
    const t = await newTenant(strict.url, strict.adminKey);
    const res = await t.api('PUT', '/v1/memory/database/config', { connection_string: 'postgres:///victim' });
    expect([res.status, res.body.detail]).toEqual([400, expect.stringMatching(/needs the service to run on a PostgreSQL server/)]);
  });

  it('follows a Confluence redirect only to an address the operator allows, and an LLM endpoint not at all', async () => {
    const inside = await listen('127.0.0.2');
    const allowedSite = await listen('127.0.0.1', (req, res) => res.writeHead(307, { location: `${inside.url}${req.url}` }).end());
    const server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_PRODUCTION: '1', ORGMEM_ALLOW_PRIVATE_NETWORKS: '127.0.0.1' }, { worker: false });
    try {
      const t = await newTenant(server.url, server.adminKey);
      const conn = await t.api('POST', '/v1/memory/connections', confluence(allowedSite.url));
      expect(conn.status).toBe(201);
      const sync = await t.api('POST', `/v1/memory/connections/${conn.body.id}/sync`);
      expect(sync.body.status).toBe('error');
      expect(sync.body.last_error).toMatch(/^confluence is not reachable from this server: 127\.0\.0\.2 is a private, loopback or other internal address/);
      const llm = await t.api('PUT', '/v1/memory/extraction/config', { provider: 'custom', base_url: `${allowedSite.url}/v1`, model: 'm' });
      expect([llm.status, llm.body.detail]).toEqual([400, 'The extraction endpoint failed its self-test: 307, a redirect, which is not followed']);
      expect(allowedSite.hits.length).toBeGreaterThanOrEqual(2);
      expect(inside.hits).toEqual([]);
      if (base) {
        // The checked socket carries a real PostgreSQL session to an allowed address.
        const own = `orgmem_t_allowed_${randomBytes(4).toString('hex')}`;
        const admin = postgres(base, { max: 1, onnotice: () => {} });
        await admin.unsafe(`create database ${own}`);
        try {
          const url = new URL(base);
          url.pathname = `/${own}`;
          expect((await t.api('PUT', '/v1/memory/database/config', { connection_string: url.toString() })).status).toBe(200);
          expect((await t.api('POST', '/v1/memory/collections/notes/memories', { text: 'kept in my own database' })).status).toBe(201);
          const ownDb = postgres(url.toString(), { max: 1, onnotice: () => {} });
          expect(await ownDb`select text from memories`).toEqual([{ text: 'kept in my own database' }]);
          await ownDb.end();
        } finally {
          await t.api('DELETE', '/v1/memory/database/config');
          await admin.unsafe(`drop database if exists ${own} with (force)`);
          await admin.end();
        }
      }
    } finally {
      await server.close();
      await allowedSite.close();
      await inside.close();
    }
  }, 60_000);
});

/** A database two servers open one after the other: a PostgreSQL database, or an embedded data directory. */
async function sharedDatabase(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const env = { ORGMEM_EMBEDDER: 'hash', ORGMEM_MASTER_KEY: randomBytes(32).toString('base64') };
  if (!base) {
    const dir = await mkdtemp(join(tmpdir(), 'orgmem-ssrf-'));
    return { env: { ...env, ORGMEM_DATA_DIR: dir }, drop: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = `orgmem_t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    env: { ...env, DATABASE_URL: url.toString() },
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

describe('configs saved before production mode', () => {
  let shared: Awaited<ReturnType<typeof sharedDatabase>>;
  let trap: Awaited<ReturnType<typeof listen>>;
  let fake: FakeLlm;
  let s3: FakeS3;
  let ownDb = '';
  let strict: TestServer;
  let t: Tenant;
  let withDb: Tenant;
  const logLines: string[] = [];

  beforeAll(async () => {
    shared = await sharedDatabase();
    [trap, fake, s3] = await Promise.all([listen('127.0.0.1', (_req, res) => res.writeHead(204).end()), startFakeLlm(), startFakeS3(['tenant-bucket'])]);
    const lenient = await startServer(shared.env, { worker: false });
    try {
      t = await newTenant(lenient.url, lenient.adminKey);
      expect((await t.api('PUT', '/v1/memory/webhook/config', { url: `${trap.url}/hook` })).status).toBe(200);
      expect((await t.api('PUT', '/v1/memory/extraction/config', { provider: 'custom', base_url: fake.url, model: 'm' })).status).toBe(200);
      expect((await t.api('PUT', '/v1/memory/storage/config', bucket(s3.endpoint, s3))).status).toBe(200);
      expect((await t.api('POST', '/v1/memory/connections', confluence(trap.url))).status).toBe(201);
      withDb = await newTenant(lenient.url, lenient.adminKey);
      if (base) {
        ownDb = `orgmem_t_own_${randomBytes(4).toString('hex')}`;
        const admin = postgres(base, { max: 1, onnotice: () => {} });
        await admin.unsafe(`create database ${ownDb}`);
        await admin.end();
        const url = new URL(base);
        url.pathname = `/${ownDb}`;
        expect((await withDb.api('PUT', '/v1/memory/database/config', { connection_string: url.toString() })).status).toBe(200);
      }
    } finally {
      await lenient.close();
    }
    expect(trap.hits).toEqual([]);
    strict = await startServer({ ...shared.env, ORGMEM_PRODUCTION: '1' }, { worker: false, logLines });
    // The same tenants and keys, now calling the server in production mode.
    for (const tenant of [t, withDb]) tenant.api = (method, path, body) => call(strict.url, method, path, { key: tenant.key, body });
  }, 120_000);
  afterAll(async () => {
    await strict?.close();
    if (ownDb) {
      const admin = postgres(base!, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${ownDb} with (force)`);
      await admin.end();
    }
    await Promise.all([trap?.close(), fake?.close(), s3?.close()]);
    await shared?.drop();
  });

  it('refuses them when used, with the reason, and sends nothing', async () => {
    const llmCalls = fake.calls.length;
    const proxied = await t.api('POST', '/v1/proxy/chat/completions', { messages: [{ role: 'user', content: 'hello' }] });
    expect([proxied.status, proxied.body.detail]).toEqual([502, expect.stringMatching(/^The LLM endpoint failed: 127\.0\.0\.1 is a private, loopback/)]);
    expect(fake.calls.length).toBe(llmCalls);

    const [conn] = (await t.api('GET', '/v1/memory/connections')).body;
    const sync = await t.api('POST', `/v1/memory/connections/${conn.id}/sync`);
    expect(sync.body).toMatchObject({
      status: 'error',
      last_error: expect.stringMatching(/^confluence is not reachable from this server: 127\.0\.0\.1 is a private/),
    });

    // A refused webhook target suspends the webhook at once, keeping the event as a dead letter, rather than delivering or retrying it.
    const written = await t.api('POST', '/v1/memory/collections/refused/memories', { text: 'an event for a refused target' });
    expect(written.status).toBe(201);
    await flushWebhook(strict.app, t.id);
    const refusal = logLines.map((l) => JSON.parse(l) as { msg: string; event?: string; reason?: string }).find((l) => l.msg === 'webhook target refused');
    expect(refusal).toMatchObject({ reason: expect.stringMatching(/^the target is refused, 127\.0\.0\.1 is a private, loopback/) });
    // The tenant sees it too, on its webhook and in its dead letters.
    expect((await t.api('GET', '/v1/memory/webhook/config')).body).toMatchObject({
      state: 'suspended',
      suspended_reason: expect.stringMatching(/^Event \S+ \(memory\.created\) failed: the target is refused, 127\.0\.0\.1 is a private, loopback/),
      last_error_at: expect.stringMatching(/Z$/),
      pending: 0,
      dead_letters: 1,
    });
    const dead = (await t.api('GET', '/v1/memory/webhook/dead-letters')).body;
    expect(dead.events).toEqual([expect.objectContaining({ type: 'memory.created', attempts: 1, last_error: expect.stringMatching(/the target is refused/) })]);

    const store = await storeFor(strict.app, t.id);
    await expect(store.put(fileKey(t.id, 'c', 'x.txt'), Buffer.from('x'), 'text/plain')).rejects.toThrow(/127\.0\.0\.1 is a private, loopback/);
    expect(trap.hits).toEqual([]);
  });

  it.runIf(base)("refuses a tenant's own database on loopback: its calls answer 503 with the reason", async () => {
    const res = await withDb.api('GET', '/v1/memory/collections');
    expect([res.status, res.body.detail]).toEqual([
      503,
      expect.stringMatching(/^Your own database \(\/v1\/memory\/database\/config\) is not used: 127\.0\.0\.1 is a private/),
    ]);
  });

  it.runIf(!base)('a tenant on the embedded database has no own database to refuse', async () => {
    expect((await withDb.api('GET', '/v1/memory/database/config')).body).toMatchObject({ available: false, configured: false });
    expect((await withDb.api('GET', '/v1/memory/collections')).status).toBe(200);
  });
});

describe('default mode', () => {
  it('a Confluence sync of a server that is not Confluence stores a sentence: never its body, never a program error', async () => {
    const answers: Record<string, [number, string, string]> = {
      html404: [404, 'text/html', SECRET_PAGE],
      html200: [200, 'text/html', SECRET_PAGE],
      wrongJson: [200, 'application/json', JSON.stringify({ note: SECRET_PAGE })],
    };
    let current = 'html404';
    const site = await listen('127.0.0.1', (_req, res) => {
      const [status, type, body] = answers[current]!;
      res.writeHead(status, { 'content-type': type }).end(body);
    });
    const server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
    try {
      const t = await newTenant(server.url, server.adminKey);
      const conn = await t.api('POST', '/v1/memory/connections', confluence(site.url));
      const errors: Record<string, string> = {};
      for (const name of Object.keys(answers)) {
        current = name;
        const sync = await t.api('POST', `/v1/memory/connections/${conn.body.id}/sync`);
        errors[name] = sync.body.last_error;
      }
      const host = `127.0.0.1:${site.port}`;
      expect(errors).toEqual({
        html404: `confluence answered 404 at ${host}, without an error of its API (its answers are JSON)`,
        html200: `confluence answered 200 at ${host} with text/html, not the JSON its API answers`,
        wrongJson: 'confluence answered in a form its API does not have, which the sync cannot read',
      });
    } finally {
      await server.close();
      await site.close();
    }
  }, 120_000);
});

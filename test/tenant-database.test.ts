import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillGraph } from '../src/services/memory/graph-tenants.ts';
import { openPoolCount } from '../src/services/tenant-db/pools.ts';
import { tenantApp } from '../src/services/tenant-db/tenant-app.ts';
import { closedPort } from './support/closed-port.ts';
import { call, newTenant } from './support/client.ts';
import { col, pollJob } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

/*
 * A tenant's own PostgreSQL (PUT /v1/memory/database/config): on PostgreSQL, against databases
 * this test creates on the same server (its trust auth ignores the password, which lets a
 * password be shown masked). On the embedded database GET says it is not available and PUT and
 * DELETE answer 400.
 */

const PATH = '/v1/memory/database/config';
const base = process.env.TEST_DATABASE_URL;

describe.runIf(!base)('on the embedded database', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
  });
  afterAll(() => server?.close());

  it('GET says a tenant database is not available here; PUT and DELETE answer 400 saying a PostgreSQL server is needed', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const got = await t.api('GET', PATH);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      available: false,
      unavailable_reason: expect.stringMatching(/PostgreSQL server/),
      configured: false,
      database: 'platform',
      connection_string: null,
      created_at: null,
      updated_at: null,
    });
    for (const [method, body] of [['PUT', { connection_string: 'postgres://u:p@127.0.0.1:5432/x' }], ['DELETE']] as const) {
      const res = await t.api(method, PATH, body);
      expect(res.status, method).toBe(400);
      expect(res.body.detail).toBe(got.body.unavailable_reason);
    }
  });
});

describe.runIf(base)("a tenant's own database", () => {
  let server: TestServer;
  let admin: postgres.Sql;
  const suffix = randomBytes(4).toString('hex');
  const own = `orgmem_own_${suffix}`;
  const bare = `orgmem_bare_${suffix}`;
  const role = `orgmem_role_${suffix}`;
  /** A URL on the test server for database `db`, as user `user` with a password (ignored by trust auth, masked by GET). */
  const urlOf = (db: string, user = 'postgres') => {
    const u = new URL(base!);
    u.username = user;
    u.password = 'hunter2-must-not-show';
    u.pathname = `/${db}`;
    return u.toString();
  };
  let ownDb: postgres.Sql;
  let platformDb: postgres.Sql;
  let silent: Server;

  beforeAll(async () => {
    admin = postgres(base!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${own}`);
    await admin.unsafe(`create database ${bare}`);
    await admin.unsafe(`create role ${role} login`);
    await admin.unsafe(`grant all on database ${bare} to ${role}`);
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
    ownDb = postgres(urlOf(own), { max: 1, onnotice: () => {} });
    platformDb = postgres(server.app.config.databaseUrl!, { max: 1, onnotice: () => {} });
    // Accepts connections and never answers: a server that hangs.
    silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  }, 60_000);
  afterAll(async () => {
    silent?.close();
    await ownDb?.end();
    await platformDb?.end();
    await server?.close();
    for (const db of [own, bare]) await admin.unsafe(`drop database if exists ${db} with (force)`);
    await admin.unsafe(`drop role if exists ${role}`);
    await admin.end();
  });

  const count = async (sql: postgres.Sql, table: string, tenantId: string) =>
    Number((await sql.unsafe(`select count(*)::int as n from ${table} where tenant_id = $1`, [tenantId]))[0]!.n);

  it('moves the data there: writes, search, remember jobs, grants and export use it; control data stays on the platform; DELETE reverts', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const other = await newTenant(server.url, server.adminKey);
    expect((await t.api('GET', PATH)).body).toEqual({
      available: true,
      unavailable_reason: null,
      configured: false,
      database: 'platform',
      connection_string: null,
      created_at: null,
      updated_at: null,
    });

    const put = await t.api('PUT', PATH, { connection_string: urlOf(own) });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ configured: true, database: 'own', note: expect.stringMatching(/Data stored before stays where it was/) });
    expect(put.body.connection_string).toBe(urlOf(own).replace('hunter2-must-not-show', '****'));
    expect(JSON.stringify((await t.api('GET', PATH)).body)).not.toContain('hunter2');

    expect((await t.api('POST', `${col('notes')}/memories/bulk`, [{ text: 'The deploy key rotates every Monday' }, { text: 'Lunch is at noon' }])).status).toBe(
      201,
    );
    const hit = await t.api('POST', `${col('notes')}/search`, { query: 'deploy key rotation', limit: 1 });
    expect(hit.status).toBe(200);
    expect(hit.body.results[0].text).toBe('The deploy key rotates every Monday');
    // Which tenants the vector graph holds is the tenant's data too: kept and filled in its database.
    expect(await fillGraph(await tenantApp(server.app, t.id), t.id)).toBe(2);
    expect(await count(ownDb, 'graph_tenants', t.id)).toBe(1);
    expect(await count(platformDb, 'graph_tenants', t.id)).toBe(0);

    // A remember job: queued on the platform's queue, its state and facts in the tenant's database.
    const queued = await t.api('POST', `${col('notes')}/remember`, { content: 'Ana lives in Lisbon. Ana likes green tea.' });
    expect(queued.status).toBe(202);
    const { job } = await pollJob(t, queued.body.job_id);
    expect(job.state).toBe('done');
    expect(await count(ownDb, 'extraction_jobs', t.id)).toBe(1);
    // A remember's idempotency key is kept with its job, in the tenant's database.
    const keyed = async () =>
      call(server.url, 'POST', `${col('notes')}/remember`, { key: t.key, body: { content: 'Ben lives in Porto.' }, headers: { 'idempotency-key': 'turn-1' } });
    const [k1, k2] = [await keyed(), await keyed()];
    expect([k1.status, k2.status]).toEqual([202, 202]);
    expect(k2.body.job_id).toBe(k1.body.job_id);
    expect(await count(ownDb, 'remember_keys', t.id)).toBe(1);
    expect(await count(platformDb, 'remember_keys', t.id)).toBe(0);
    expect(await count(ownDb, 'extraction_jobs', t.id)).toBe(2);

    // Grants live with the collection, key labels come from the platform.
    const reader = await t.api('POST', '/v1/memory/keys', { label: 'reader-agent' });
    const granted = await t.api('PUT', `${col('notes')}/grants`, { agent_key_id: reader.body.id, can_read: true, can_write: false });
    expect(granted.status).toBe(400); // would leave nobody able to manage the collection
    const me = (await t.api('GET', '/v1/memory/admin/me')).body.key.id;
    expect((await t.api('PUT', `${col('notes')}/grants`, { agent_key_id: me, can_read: true, can_write: true })).status).toBe(200);
    expect((await t.api('PUT', `${col('notes')}/grants`, { agent_key_id: reader.body.id, can_read: true, can_write: false })).body.label).toBe('reader-agent');
    const grants = await t.api('GET', `${col('notes')}/grants`);
    expect(grants.body.grants.map((g: { label: string }) => g.label).sort()).toEqual(
      [(await t.api('GET', '/v1/memory/admin/me')).body.key.label, 'reader-agent'].sort(),
    );
    const asReader = await t.api('GET', `${col('notes')}/memories`, undefined, reader.body.api_key);
    expect(asReader.status).toBe(200);
    expect((await t.api('POST', `${col('notes')}/memories`, { text: 'no' }, reader.body.api_key)).status).toBe(403);

    const exported = await t.api('GET', '/v1/memory/admin/export');
    expect(exported.status).toBe(200);
    expect(JSON.stringify(exported.body)).toContain('The deploy key rotates every Monday');

    const onOwn = await count(ownDb, 'memories', t.id);
    expect(onOwn).toBeGreaterThanOrEqual(4);
    expect(await count(platformDb, 'memories', t.id)).toBe(0);
    expect(await count(platformDb, 'collections', t.id)).toBe(0);
    expect(await count(ownDb, 'collection_grants', t.id)).toBe(2);
    // The audit log, keys and the tenant stay on the platform; the tenant's database holds none of them.
    expect(await count(platformDb, 'audit_log', t.id)).toBeGreaterThan(0);
    expect(await count(ownDb, 'audit_log', t.id)).toBe(0);
    expect(Number((await ownDb.unsafe('select count(*)::int as n from api_keys'))[0]!.n)).toBe(0);
    expect(Number((await ownDb.unsafe('select count(*)::int as n from tenants'))[0]!.n)).toBe(0);

    // Another tenant is on the platform and sees nothing of it.
    expect((await other.api('GET', '/v1/memory/collections')).body).toEqual([]);
    expect((await other.api('POST', `${col('notes')}/memories`, { text: 'other tenant on the platform' })).status).toBe(201);
    expect(await count(platformDb, 'memories', other.id)).toBe(1);

    const reverted = await t.api('DELETE', PATH);
    expect(reverted.status).toBe(200);
    expect(reverted.body).toMatchObject({
      configured: false,
      database: 'platform',
      connection_string: null,
      note: expect.stringMatching(/stays there, untouched/),
    });
    expect((await t.api('GET', '/v1/memory/collections')).body).toEqual([]);
    expect(await count(ownDb, 'memories', t.id)).toBe(onOwn);
    expect((await t.api('POST', `${col('back')}/memories`, { text: 'back on the platform' })).status).toBe(201);
    expect(await count(platformDb, 'memories', t.id)).toBe(1);
  });

  it('a failing audit entry undoes the write in the tenant database too', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', PATH, { connection_string: urlOf(own) })).status).toBe(200);
    const doomed = await t.api('POST', '/v1/memory/keys', { label: `doomed-${suffix}` });
    // A constraint rather than a trigger: Citus has no triggers on distributed tables, and the
    // platform may be a Citus coordinator (docs/citus.md, "A tenant's own database").
    await platformDb.unsafe(`alter table audit_log add constraint refuse_doomed check (actor_label is distinct from 'doomed-${suffix}')`);
    try {
      const res = await t.api('POST', `${col('kept')}/memories`, { text: 'must not stay' }, doomed.body.api_key);
      expect(res.status).toBe(500);
    } finally {
      await platformDb.unsafe('alter table audit_log drop constraint refuse_doomed');
    }
    expect(await count(ownDb, 'memories', t.id)).toBe(0);
    expect(await count(ownDb, 'collections', t.id)).toBe(0);
  });

  it('deleting the account erases its rows in its own database', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', PATH, { connection_string: urlOf(own) })).status).toBe(200);
    expect((await t.api('POST', `${col('gone')}/memories`, { text: 'erase me' })).status).toBe(201);
    expect(await count(ownDb, 'memories', t.id)).toBe(1);
    expect((await t.api('POST', '/v1/memory/admin/delete-account', { confirm: t.name })).status).toBe(200);
    expect(await count(ownDb, 'memories', t.id)).toBe(0);
    expect(await count(ownDb, 'collections', t.id)).toBe(0);
  });

  it('refuses a database where pgvector cannot be installed, the platform database, unreachable and hanging servers, and bad strings; nothing is saved', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const refused = async (connection_string: string, detail: RegExp) => {
      const res = await t.api('PUT', PATH, { connection_string });
      expect(res.status, connection_string).toBe(400);
      expect(res.body.detail).toMatch(detail);
    };
    await refused(urlOf(bare, role), /pgvector is not installed in this database and this role cannot install it/);
    await refused(server.app.config.databaseUrl!, /orgmem platform database/);
    await refused(`postgres://u:p@127.0.0.1:${await closedPort()}/x`, /Could not connect/);
    await refused(`postgres://u:p@127.0.0.1:${(silent.address() as AddressInfo).port}/x`, /Could not connect/);
    for (const bad of ['mysql://u:p@h/db', 'not a url', 'x'.repeat(3000)]) {
      const res = await t.api('PUT', PATH, { connection_string: bad });
      expect(res.status, bad.slice(0, 20)).toBe(422);
    }
    expect((await t.api('GET', PATH)).body.configured).toBe(false);
    // The platform's foreign keys survived the attempt on it.
    const [fk] = await platformDb.unsafe(`select count(*)::int as n from pg_constraint where contype = 'f' and conrelid = 'memories'::regclass`);
    expect(Number(fk!.n)).toBeGreaterThan(0);
    // The bare database was left as it was.
    const bareDb = postgres(urlOf(bare), { max: 1, onnotice: () => {} });
    try {
      expect((await bareDb.unsafe(`select to_regclass('memories')::text as t`))[0]!.t).toBeNull();
    } finally {
      await bareDb.end();
    }
  }, 30_000);

  it('answers 503 while its database cannot be reached, and the platform keeps working for others', async () => {
    const gone = `orgmem_gone_${suffix}`;
    await admin.unsafe(`create database ${gone}`);
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', PATH, { connection_string: urlOf(gone) })).status).toBe(200);
    expect((await t.api('POST', `${col('x')}/memories`, { text: 'before the outage' })).status).toBe(201);
    await admin.unsafe(`drop database ${gone} with (force)`);
    for (const [method, path, body] of [
      ['GET', `${col('x')}/memories`],
      ['POST', `${col('x')}/memories`, { text: 'during' }],
      ['POST', `${col('x')}/search`, { query: 'outage' }],
    ] as const) {
      const res = await t.api(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.body.detail).toMatch(/database cannot be reached/);
    }
    // Control routes still answer: the config can be removed.
    expect((await t.api('DELETE', PATH)).status).toBe(200);
    expect((await t.api('POST', `${col('x')}/memories`, { text: 'back on the platform' })).status).toBe(201);
  });

  it('opens a pool on the first request after the config and reuses it', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('PUT', PATH, { connection_string: urlOf(own) })).status).toBe(200);
    const before = openPoolCount(server.app);
    expect((await t.api('POST', `${col('pooled')}/memories`, { text: 'first' })).status).toBe(201);
    expect(openPoolCount(server.app)).toBe(before + 1);
    for (let i = 0; i < 3; i++) expect((await t.api('GET', `${col('pooled')}/memories`)).body).toHaveLength(1);
    expect(openPoolCount(server.app)).toBe(before + 1);
  });
});

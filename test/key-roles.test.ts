import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/maintenance/migrate.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/** Key roles (docs/access.md, "Key roles"): what an agent key may no longer change, and how existing keys were migrated. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close());

const roles = async (t: Tenant) =>
  Object.fromEntries((await t.api('GET', '/v1/memory/keys')).body.map((k: { label: string; role: string }) => [k.label, k.role]));

describe('an agent key without a grant on a restricted collection', () => {
  let t: Tenant;
  let writer: { id: string; key: string };
  let outsider: { id: string; key: string };
  beforeAll(async () => {
    t = await newTenant(server.url, server.adminKey);
    writer = await t.newKey('writer');
    outsider = await t.newKey('outsider');
    expect((await t.api('POST', '/v1/memory/collections/secret/memories', { text: 'the vault code is 4711' })).status).toBe(201);
    expect((await t.api('PUT', '/v1/memory/collections/secret/grants', { agent_key_id: writer.id, can_read: true, can_write: true })).status).toBe(200);
  });

  it('cannot reroute the tenant data: webhook, extraction endpoint, database, keys, grants, export', async () => {
    const attempts: Array<[string, string, unknown]> = [
      ['PUT', '/v1/memory/webhook/config', { url: 'https://attacker.example/hook' }],
      ['PUT', '/v1/memory/extraction/config', { base_url: 'https://attacker.example/v1', model: 'm' }],
      ['PUT', '/v1/memory/database/config', { connection_string: 'postgres://attacker.example/db' }],
      ['POST', '/v1/memory/keys', { label: 'mine', role: 'admin' }],
      ['PUT', '/v1/memory/collections/secret/grants', { agent_key_id: outsider.id, can_read: true, can_write: false }],
      ['GET', '/v1/memory/admin/export', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(server.url, method, path, { key: outsider.key, body });
      expect(res.status, path).toBe(403);
      expect(res.body.detail, path).toMatch(/needs an admin API key; this key's role is agent$/);
    }
    expect((await t.api('GET', '/v1/memory/webhook/config')).body.url).toBeNull();
    expect((await t.api('GET', '/v1/memory/collections/secret/grants', undefined, writer.key)).body.grants.map((g: { label: string }) => g.label)).toEqual([
      'writer',
    ]);
  });

  it('still works with memories within its grants', async () => {
    expect((await t.api('POST', '/v1/memory/collections/open/memories', { text: 'an open note' }, outsider.key)).status).toBe(201);
    expect((await t.api('GET', '/v1/memory/collections/secret/memories', undefined, outsider.key)).status).toBe(403);
    expect((await t.api('POST', '/v1/memory/collections/secret/memories', { text: 'granted write' }, writer.key)).status).toBe(201);
  });

  it('is told its role by admin.me, and the keys and agents lists show every role', async () => {
    expect((await t.api('GET', '/v1/memory/admin/me', undefined, outsider.key)).body.key).toMatchObject({ label: 'outsider', role: 'agent' });
    expect((await t.api('GET', '/v1/memory/admin/me')).body.key).toMatchObject({ label: 'default', role: 'admin' });
    expect(await roles(t)).toEqual({ default: 'admin', writer: 'agent', outsider: 'agent' });
    const agents = (await t.api('GET', '/v1/memory/agents')).body as Array<{ label: string; role: string }>;
    expect(agents.map((a) => [a.label, a.role])).toEqual([
      ['default', 'admin'],
      ['writer', 'agent'],
      ['outsider', 'agent'],
    ]);
  });
});

describe('keys', () => {
  it('are agent keys unless created as admin keys, and a rotation keeps the role', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const plain = await t.api('POST', '/v1/memory/keys', { label: 'plain' });
    expect(plain.status).toBe(201);
    expect(plain.body.role).toBe('agent');
    const second = await t.api('POST', '/v1/memory/keys', { label: 'second admin', role: 'admin' });
    expect(second.body.role).toBe('admin');
    expect((await t.api('POST', '/v1/memory/keys', { label: 'bad', role: 'owner' })).status).toBe(422);
    // The second admin may do what the first may.
    expect((await t.api('PUT', '/v1/memory/webhook/config', { url: 'https://hooks.example/a' }, second.body.api_key)).status).toBe(200);
    const rotated = await t.api('POST', '/v1/memory/admin/rotate-key', {}, plain.body.api_key);
    expect(rotated.status).toBe(200);
    expect((await t.api('GET', '/v1/memory/admin/me', undefined, rotated.body.api_key)).body.key).toMatchObject({ label: 'plain', role: 'agent' });
  });
});

describe("changing a key's role", () => {
  it('is an admin operation that takes effect on the next call, and is audited', async () => {
    // An operator's tenant, so the test can read its own audit log.
    const t = await newTenant(server.url, server.adminKey, { admin: true });
    const bot = await t.newKey('bot');
    const hook = { url: 'https://hooks.example/a' };
    expect((await t.api('PUT', '/v1/memory/webhook/config', hook, bot.key)).status).toBe(403);
    const promoted = await t.api('PUT', `/v1/memory/keys/${bot.id}/role`, { role: 'admin' });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ id: bot.id, label: 'bot', role: 'admin', revoked_at: null });
    expect(promoted.body.api_key).toBeUndefined();
    expect((await t.api('PUT', '/v1/memory/webhook/config', hook, bot.key)).status).toBe(200);
    // The promoted key may now take the role from the first one, which loses it at once.
    expect((await t.api('PUT', `/v1/memory/keys/${(await t.api('GET', '/v1/memory/admin/me')).body.key.id}/role`, { role: 'agent' }, bot.key)).status).toBe(
      200,
    );
    expect((await t.api('DELETE', '/v1/memory/webhook/config')).status).toBe(403);
    expect(await roles(t)).toEqual({ default: 'agent', bot: 'admin' });
    // An operator endpoint follows the role too: the operator tenant's agent key is refused.
    expect((await t.api('GET', '/v1/memory/admin/audit')).status).toBe(403);
    const audit = (await t.api('GET', '/v1/memory/admin/audit', undefined, bot.key)).body as Array<{
      action: string;
      target: string;
      actor: { label: string };
      detail: Record<string, unknown>;
    }>;
    const changes = audit.filter((e) => e.action === 'keys.setRole');
    expect(changes.map((e) => [e.actor.label, e.target, e.detail.role])).toEqual([
      ['bot', expect.stringMatching(/^keys\/[0-9a-f-]+\/role$/), 'agent'],
      ['default', `keys/${bot.id}/role`, 'admin'],
    ]);
  });

  it("refuses to take the admin role from the tenant's last active admin key", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const me = (await t.api('GET', '/v1/memory/admin/me')).body.key.id as string;
    const refused = await t.api('PUT', `/v1/memory/keys/${me}/role`, { role: 'agent' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe('This is the last active admin key of the tenant; make another key admin first');
    // Setting the role a key has is no change and no refusal.
    expect((await t.api('PUT', `/v1/memory/keys/${me}/role`, { role: 'admin' })).status).toBe(200);
    // A revoked admin key does not count as the other admin.
    const spare = await t.newKey('spare', false, 'admin');
    expect((await t.api('DELETE', `/v1/memory/keys/${spare.id}`)).status).toBe(204);
    expect((await t.api('PUT', `/v1/memory/keys/${me}/role`, { role: 'agent' })).status).toBe(400);
    expect(await roles(t)).toEqual({ default: 'admin', spare: 'admin' });
  });

  it('answers 404 for a revoked, unknown or foreign key and 422 for an unknown role', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const other = await newTenant(server.url, server.adminKey);
    const gone = await t.newKey('gone');
    expect((await t.api('DELETE', `/v1/memory/keys/${gone.id}`)).status).toBe(204);
    const foreign = (await other.api('GET', '/v1/memory/admin/me')).body.key.id as string;
    for (const id of [gone.id, foreign, '00000000-0000-7000-8000-000000000000', 'not-an-id']) {
      const res = await t.api('PUT', `/v1/memory/keys/${id}/role`, { role: 'admin' });
      expect(res.status, id).toBe(404);
    }
    expect((await other.api('GET', '/v1/memory/admin/me')).body.key.role).toBe('admin');
    expect((await t.api('PUT', `/v1/memory/keys/${gone.id}/role`, { role: 'owner' })).status).toBe(422);
  });
});

describe('migration 019: the roles of the keys that existed before', () => {
  it('makes every key of an unrestricted tenant admin, and only the owner key of a restricted one', async () => {
    const open = await newTenant(server.url, server.adminKey);
    await open.newKey('helper');
    await open.newKey('bot');

    // Restricted, its first key rotated: the rotated key's successor is the owner.
    const restricted = await newTenant(server.url, server.adminKey);
    const granted = await restricted.newKey('granted');
    await restricted.newKey('ungranted');
    await restricted.api('POST', '/v1/memory/collections/private/memories', { text: 'private' });
    await restricted.api('PUT', '/v1/memory/collections/private/grants', { agent_key_id: granted.id, can_read: true, can_write: true });
    const successor = (await restricted.api('POST', '/v1/memory/admin/rotate-key', {})).body.api_key as string;

    // Restricted, its first key revoked: its oldest active key is the owner.
    const orphaned = await newTenant(server.url, server.adminKey);
    const heir = await orphaned.newKey('heir');
    const later = await orphaned.newKey('later');
    await orphaned.api('POST', '/v1/memory/collections/private/memories', { text: 'private' });
    await orphaned.api('PUT', '/v1/memory/collections/private/grants', { agent_key_id: later.id, can_read: true, can_write: true });
    const first = (await orphaned.api('GET', '/v1/memory/admin/me')).body.key.id;
    expect((await orphaned.api('DELETE', `/v1/memory/keys/${first}`)).status).toBe(204);

    // A database of its own, whose grants the platform cannot see: restricted as well.
    const own = await newTenant(server.url, server.adminKey);
    await own.newKey('other');

    // Back to before 019, every role forgotten, then migrated again.
    const db = server.app.platform;
    await db.query(`insert into database_configs (tenant_id, connection_string_sealed) values ($1, 'not read by the migration')`, [own.id]);
    await db.exec(`alter table api_keys drop column role; delete from schema_migrations where version = 19;`);
    await migrate(db, server.app.embedder.dimensions, server.app.config.search.vectorIndex);
    await db.query('delete from database_configs where tenant_id = $1', [own.id]);

    expect(await roles(open)).toEqual({ default: 'admin', helper: 'admin', bot: 'admin' });
    const restrictedKeys = (await restricted.api('GET', '/v1/memory/keys', undefined, successor)).body as Array<{
      label: string;
      role: string;
      revoked_at: string | null;
    }>;
    expect(restrictedKeys.map((k) => [k.label, k.role, k.revoked_at === null])).toEqual([
      ['default', 'agent', false],
      ['granted', 'agent', true],
      ['ungranted', 'agent', true],
      ['default', 'admin', true],
    ]);
    expect(await roles({ ...orphaned, api: (m, p, b) => orphaned.api(m, p, b, heir.key) })).toEqual({ default: 'agent', heir: 'admin', later: 'agent' });
    expect(await roles(own)).toEqual({ default: 'admin', other: 'agent' });
  });
});

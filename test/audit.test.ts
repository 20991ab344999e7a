import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedures } from '../procedures/index.ts';
import { isRead } from '../src/pipeline/procedure.ts';
import { newTenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { trpcClient } from './support/transports.ts';

describe('audit log', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
  });
  afterAll(() => server?.close());

  it('records every successful write and access or account change with actor, action, target and a small detail', async () => {
    const t = await newTenant(server.url, server.adminKey, { admin: true });
    const agent = await t.newKey('scribe');
    const created = await t.api('POST', '/v1/memory/collections/notes/memories', { text: 'secret plans', category: 'fact' }, agent.key);
    await t.api('GET', '/v1/memory/collections/notes/memories'); // reads are not recorded
    await t.api('POST', '/v1/memory/collections/notes/memories', { text: '' }); // nor failed writes
    await t.api('PUT', '/v1/memory/collections/notes/grants', { agent_key_id: agent.id, can_read: true, can_write: true });
    await t.api('PUT', '/v1/memory/webhook/config', { url: 'http://127.0.0.1:9/hook?token=abc' });
    await t.api('DELETE', `/v1/memory/collections/notes/memories/${created.body.id}`, undefined, agent.key);
    await t.api('POST', '/v1/memory/collections/other/memories/bulk', [{ text: 'a' }, { text: 'b' }]);

    const res = await t.api('GET', '/v1/memory/admin/audit');
    expect(res.status).toBe(200);
    const entries = res.body.reverse();
    expect(entries.map((e: { action: string; target: string; actor: { label: string } }) => [e.actor.label, e.action, e.target])).toEqual([
      ['default', 'keys.create', 'keys'],
      ['scribe', 'memories.create', 'collections/notes/memories'],
      ['default', 'grants.put', 'collections/notes/grants'],
      ['default', 'webhook.put', 'webhook/config'],
      ['scribe', 'memories.delete', `collections/notes/memories/${created.body.id}`],
      ['default', 'memories.bulk', 'collections/other/memories/bulk'],
    ]);
    const [keys, create, grant, hook, , bulk] = entries;
    expect(keys.detail).toEqual({ label: 'scribe', role: 'agent', read_only: false, person: false, id: agent.id });
    expect(create.actor).toEqual({ id: agent.id, label: 'scribe' });
    expect(create.detail).toEqual({ importance: 0.5, category: 'fact', source: 'api', container_tag: null, id: created.body.id });
    expect(grant.detail).toEqual({ agent_key_id: agent.id, can_read: true, can_write: true, id: agent.id });
    expect(hook.detail).toEqual({}); // the URL may carry a token: never copied
    expect(bulk.detail).toEqual({ items_count: 2 });
    expect(JSON.stringify(res.body)).not.toContain('secret plans');
    for (const e of entries) expect(e.at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it('records no read, from any front end: not the operator reports, not the log itself, not an import in progress', async () => {
    const t = await newTenant(server.url, server.adminKey, { admin: true });
    const imported = await t.api('POST', '/v1/memory/admin/import', { memories: [{ text: 'imported', collection: 'notes' }] });
    expect(imported.status).toBe(202);
    // Every GET of the operator's and the import's progress over REST...
    const gets = procedures.filter((p) => p.rest.method === 'GET' && p.rest.path.startsWith('/v1/memory/admin/') && !p.rest.path.includes('{'));
    expect(gets.map((p) => p.name)).toEqual(expect.arrayContaining(['admin.audit', 'admin.metrics', 'admin.usage', 'admin.connectorsStatus']));
    for (const proc of gets) expect((await t.api('GET', proc.rest.path)).status, proc.name).toBe(200);
    expect((await t.api('GET', `/v1/memory/admin/import/${imported.body.import_id}`)).status).toBe(200);
    // ...over tRPC, where they are queries...
    const rpc = trpcClient(server.url, t.key);
    await rpc.admin.audit.query({});
    await rpc.admin.metrics.query();
    await rpc.admin.importStatus.query({ import: imported.body.import_id });
    // ...and with a read-only admin key, which may read them as it reads anything else.
    const reader = await t.newKey('reader', true, 'admin');
    for (const path of ['/v1/memory/admin/audit', '/v1/memory/admin/metrics', `/v1/memory/admin/import/${imported.body.import_id}`]) {
      expect((await t.api('GET', path, undefined, reader.key)).status, path).toBe(200);
    }
    const entries = (await t.api('GET', '/v1/memory/admin/audit')).body.reverse();
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['admin.import', 'keys.create']);
    expect(gets.filter((p) => !isRead(p)).map((p) => p.name)).toEqual([]);
  });

  it('is an operator endpoint with days, limit and tenant_id', async () => {
    const plain = await newTenant(server.url, server.adminKey);
    await plain.api('POST', '/v1/memory/collections/a/memories', { text: 'one' });
    await plain.api('POST', '/v1/memory/collections/a/memories', { text: 'two' });
    expect((await plain.api('GET', '/v1/memory/admin/audit')).status).toBe(403);

    const operator = await newTenant(server.url, server.adminKey, { admin: true });
    // Another tenant's log is aggregates only: counts per action and day, no actor, target or detail.
    const other = await operator.api('GET', `/v1/memory/admin/audit?tenant_id=${plain.id}`);
    expect(other.status).toBe(200);
    expect(other.body).toEqual([{ day: new Date().toISOString().slice(0, 10), action: 'memories.create', count: 2 }]);
    await operator.api('POST', '/v1/memory/collections/b/memories', { text: 'mine' });
    const own = await operator.api('GET', `/v1/memory/admin/audit?tenant_id=${operator.id}&limit=1`);
    expect(own.body).toEqual([expect.objectContaining({ action: 'memories.create', target: 'collections/b/memories', actor: expect.any(Object) })]);
    await server.app.db.exec(`alter table audit_log disable trigger audit_log_append_only`);
    await server.app.db.query(`update audit_log set at = now() - interval '40 days' where tenant_id = $1`, [plain.id]);
    await server.app.db.exec(`alter table audit_log enable trigger audit_log_append_only`);
    expect((await operator.api('GET', `/v1/memory/admin/audit?tenant_id=${plain.id}`)).body).toEqual([]);
    expect((await operator.api('GET', `/v1/memory/admin/audit?tenant_id=${plain.id}&days=60`)).body).toEqual([expect.objectContaining({ count: 2 })]);
    for (const q of ['days=0', 'limit=0', 'limit=1001', 'tenant_id=nope']) {
      expect((await operator.api('GET', `/v1/memory/admin/audit?${q}`)).status, q).toBe(422);
    }
  });

  it('is append-only: rows cannot be changed or removed, except with their tenant', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await t.api('POST', '/v1/memory/collections/a/memories', { text: 'one' });
    await expect(server.app.db.query(`update audit_log set action = 'forged' where tenant_id = $1`, [t.id])).rejects.toThrow(/append-only/);
    await expect(server.app.db.query('delete from audit_log where tenant_id = $1', [t.id])).rejects.toThrow(/append-only/);
    const { n } = (await server.app.db.query<{ n: number }>('select count(*)::int as n from audit_log where tenant_id = $1', [t.id]))[0]!;
    expect(n).toBe(1);
  });

  it('is written in the transaction of the change: a change whose entry cannot be written is not made', async () => {
    const t = await newTenant(server.url, server.adminKey);
    // The audit insert fails for this one label, as a full disk or a lost connection would.
    await server.app.db.exec(`
      create function audit_refuse() returns trigger language plpgsql as $$
      begin
        if new.detail->>'label' = 'unrecordable' then raise exception 'audit write refused'; end if;
        return new;
      end $$;
      create trigger audit_refuse before insert on audit_log for each row execute function audit_refuse();`);
    try {
      const res = await t.api('POST', '/v1/memory/keys', { label: 'unrecordable' });
      expect(res.status).toBe(500);
      expect(res.body.detail).toMatch(/^Internal error/);
      const labels = (await t.api('GET', '/v1/memory/keys')).body.map((k: { label: string }) => k.label);
      expect(labels).not.toContain('unrecordable');
      expect((await t.api('POST', '/v1/memory/keys', { label: 'recordable' })).status).toBe(201);
    } finally {
      await server.app.db.exec('drop trigger audit_refuse on audit_log; drop function audit_refuse()');
    }
  });
});

import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { newTenant, shared, type Tenant } from './support/client.ts';

describe('grants and agents', () => {
  const { url, adminKey } = shared();
  let t: Tenant;
  let agent: { id: string; key: string };
  let ownerId: string;

  beforeEach(async () => {
    t = await newTenant(url, adminKey);
    // An admin key, as grants are managed with admin keys; grants bind admin keys as they bind agent keys.
    agent = await t.newKey('researcher', false, 'admin');
    ownerId = (await t.api('GET', '/v1/memory/agents')).body[0].id;
    expect((await t.api('POST', '/v1/memory/collections/notes/memories', { text: 'the launch is on Tuesday' })).status).toBe(201);
  });

  const grant = (body: Record<string, unknown>, key?: string, collection = 'notes') => t.api('PUT', `/v1/memory/collections/${collection}/grants`, body, key);
  const rw = (id: string) => ({ agent_key_id: id, can_read: true, can_write: true });
  const readOnly = (id: string) => ({ agent_key_id: id, can_read: true, can_write: false });

  it('the first grant restricts the collection; grants list, upsert in place and only writers manage them', async () => {
    expect((await t.api('GET', '/v1/memory/collections/notes/grants')).body).toEqual({ collection: 'notes', restricted: false, grants: [] });

    const first = await grant(rw(agent.id));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ kind: 'key', id: agent.id, agent_key_id: agent.id, label: 'researcher', can_read: true, can_write: true });

    // The other key is not granted: the collection is closed to it and gone from its listing.
    expect((await t.api('GET', '/v1/memory/collections/notes/memories')).status).toBe(403);
    expect((await t.api('GET', '/v1/memory/collections/notes/grants')).status).toBe(403);
    expect((await grant(rw(ownerId))).status).toBe(403);
    expect((await t.api('GET', '/v1/memory/collections')).body).toEqual([]);
    const listed = await t.api('GET', '/v1/memory/collections', undefined, agent.key);
    expect(listed.body).toMatchObject([{ name: 'notes', restricted: true, memory_count: 1 }]);

    // The granted writer adds a read-only grant, then changes it in place.
    expect((await grant(readOnly(ownerId), agent.key)).status).toBe(200);
    expect((await t.api('GET', '/v1/memory/collections/notes/memories')).status).toBe(200);
    expect((await t.api('POST', '/v1/memory/collections/notes/memories', { text: 'x' })).status).toBe(403);
    expect((await grant(rw(ownerId))).status).toBe(403); // a reader cannot upgrade itself
    expect((await grant(rw(ownerId), agent.key)).status).toBe(200);
    const listing = await t.api('GET', '/v1/memory/collections/notes/grants');
    expect(listing.body).toEqual({
      collection: 'notes',
      restricted: true,
      grants: [first.body, { kind: 'key', id: ownerId, agent_key_id: ownerId, label: 'default', can_read: true, can_write: true }],
    });
  });

  it('removing the last grant reopens the collection to every key', async () => {
    await grant(rw(agent.id));
    expect((await t.api('GET', '/v1/memory/collections/notes')).status).toBe(403);
    expect((await t.api('DELETE', `/v1/memory/collections/notes/grants/${agent.id}`, undefined, agent.key)).status).toBe(204);
    const open = await t.api('GET', '/v1/memory/collections/notes');
    expect(open.status).toBe(200);
    expect(open.body.restricted).toBe(false);
    expect((await t.api('DELETE', `/v1/memory/collections/notes/grants/${agent.id}`)).status).toBe(404);
  });

  it('refuses changes that would leave a restricted collection without a writer (400)', async () => {
    const noWriter = await grant(readOnly(agent.id));
    expect(noWriter.status).toBe(400);
    expect(noWriter.body.detail).toMatch(/can_write/);
    expect((await t.api('GET', '/v1/memory/collections/notes/grants')).body.restricted).toBe(false);

    const reader = await t.newKey('reader', true);
    expect((await grant(rw(reader.id))).status).toBe(400); // a read-only key can never write

    await grant(rw(agent.id));
    await grant(readOnly(ownerId), agent.key);
    // Downgrading or removing the only writer is refused; removing the others is fine.
    expect((await grant(readOnly(agent.id), agent.key)).status).toBe(400);
    expect((await t.api('DELETE', `/v1/memory/collections/notes/grants/${agent.id}`, undefined, agent.key)).status).toBe(400);
    expect((await t.api('DELETE', `/v1/memory/collections/notes/grants/${ownerId}`, undefined, agent.key)).status).toBe(204);
    expect((await t.api('GET', '/v1/memory/collections/notes/grants', undefined, agent.key)).body.grants).toEqual([
      { kind: 'key', id: agent.id, agent_key_id: agent.id, label: 'researcher', can_read: true, can_write: true },
    ]);
  });

  it('refuses unknown collections, unknown, malformed, revoked and foreign keys with 404', async () => {
    const other = await newTenant(url, adminKey);
    const revoked = await t.newKey('gone');
    expect((await t.api('DELETE', `/v1/memory/keys/${revoked.id}`)).status).toBe(204);
    const foreignKeyId = (await other.api('GET', '/v1/memory/agents')).body[0].id;

    expect((await grant(rw(agent.id), undefined, 'no-such-collection')).status).toBe(404);
    for (const id of [randomUUID(), 'not-a-uuid', revoked.id, foreignKeyId]) {
      const res = await grant(rw(id));
      expect(res.status, id).toBe(404);
      expect(res.body.detail).toMatch(/not found/);
    }
    expect((await t.api('GET', '/v1/memory/collections/no-such-collection/grants')).status).toBe(404);
    expect((await t.api('DELETE', `/v1/memory/collections/no-such-collection/grants/${agent.id}`)).status).toBe(404);
    expect((await t.api('DELETE', '/v1/memory/collections/notes/grants/not-a-uuid')).status).toBe(404);
    // Another tenant cannot see or change this tenant's grants either.
    expect((await other.api('GET', '/v1/memory/collections/notes/grants')).status).toBe(404);
    expect((await other.api('PUT', '/v1/memory/collections/notes/grants', rw(foreignKeyId))).status).toBe(404);
    expect((await t.api('GET', '/v1/memory/collections/notes/grants')).body.restricted).toBe(false);
  });

  it('validates the body (422) and refuses read-only keys (403)', async () => {
    const missing = await grant({ agent_key_id: agent.id, can_read: true });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ path: 'can_write', message: expect.any(String) }]);
    expect((await grant({ agent_key_id: agent.id, can_read: 'yes', can_write: true })).status).toBe(422);
    expect((await grant(rw(agent.id), undefined, '.hidden')).status).toBe(422);
    const reader = await t.newKey('reader', true);
    expect((await grant(rw(agent.id), reader.key)).status).toBe(403);
    expect((await t.api('DELETE', `/v1/memory/collections/notes/grants/${agent.id}`, undefined, reader.key)).status).toBe(403);
    expect((await t.api('GET', '/v1/memory/collections/notes/grants', undefined, reader.key)).status).toBe(200);
  });

  it('lists active keys as agents, without key material', async () => {
    const revoked = await t.newKey('retired');
    await t.api('DELETE', `/v1/memory/keys/${revoked.id}`);
    const res = await t.api('GET', '/v1/memory/agents');
    expect(res.status).toBe(200);
    expect(res.body.map((a: { label: string }) => a.label)).toEqual(['default', 'researcher']);
    for (const a of res.body) expect(Object.keys(a).sort()).toEqual(['created_at', 'id', 'label', 'read_only', 'role']);
    expect((await t.api('GET', '/v1/memory/agents', undefined, 'mv_wrong')).status).toBe(401);
  });

  it('a rotated key keeps its grants', async () => {
    await grant(rw(agent.id));
    const rotated = await t.api('POST', '/v1/memory/admin/rotate-key', {}, agent.key);
    expect(rotated.status).toBe(200);
    expect((await t.api('GET', '/v1/memory/collections/notes/memories', undefined, agent.key)).status).toBe(401);
    expect((await t.api('GET', '/v1/memory/collections/notes/memories', undefined, rotated.body.api_key)).status).toBe(200);
    const listing = await t.api('GET', '/v1/memory/collections/notes/grants', undefined, rotated.body.api_key);
    expect(listing.body.grants).toEqual([
      { kind: 'key', id: rotated.body.id, agent_key_id: rotated.body.id, label: 'researcher', can_read: true, can_write: true },
    ]);
  });
});

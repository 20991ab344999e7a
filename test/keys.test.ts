import { beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, shared, type Tenant } from './support/client.ts';

const { url, adminKey } = shared();
let t: Tenant;

beforeAll(async () => {
  t = await newTenant(url, adminKey, { tier: 'free' });
});

describe('keys', () => {
  it('create shows the key once; the list is masked and carries no secret', async () => {
    const created = await t.api('POST', '/v1/memory/keys', { label: 'indexer', read_only: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ label: 'indexer', read_only: true });
    expect(created.body.api_key).toMatch(/^mv_[A-Za-z0-9_-]{43}$/);
    const list = await t.api('GET', '/v1/memory/keys');
    const entry = list.body.find((k: { id: string }) => k.id === created.body.id);
    expect(entry).toMatchObject({
      label: 'indexer',
      read_only: true,
      prefix: created.body.api_key.slice(0, 9),
      masked: `${created.body.api_key.slice(0, 9)}…`,
      revoked_at: null,
    });
    expect(JSON.stringify(list.body)).not.toContain(created.body.api_key);
    const used = await call(url, 'GET', '/v1/memory/admin/me', { key: created.body.api_key });
    expect(used.status).toBe(200);
    const after = (await t.api('GET', '/v1/memory/keys')).body.find((k: { id: string }) => k.id === created.body.id);
    expect(after.last_used_at).not.toBeNull();
  });

  it('label is required and at most 100 characters', async () => {
    expect((await t.api('POST', '/v1/memory/keys', {})).status).toBe(422);
    expect((await t.api('POST', '/v1/memory/keys', { label: '' })).status).toBe(422);
    expect((await t.api('POST', '/v1/memory/keys', { label: 'x'.repeat(101) })).status).toBe(422);
  });

  it('revoke is soft; the revoked key is 401; the last active key cannot be revoked', async () => {
    const solo = await newTenant(url, adminKey);
    const extra = await solo.newKey('extra');
    expect((await solo.api('DELETE', `/v1/memory/keys/${extra.id}`)).status).toBe(204);
    const listed = (await solo.api('GET', '/v1/memory/keys')).body.find((k: { id: string }) => k.id === extra.id);
    expect(listed.revoked_at).not.toBeNull();
    const denied = await call(url, 'GET', '/v1/memory/admin/me', { key: extra.key });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toBe('Bearer');
    const own = (await solo.api('GET', '/v1/memory/keys')).body.find((k: { revoked_at: string | null }) => !k.revoked_at);
    const last = await solo.api('DELETE', `/v1/memory/keys/${own.id}`);
    expect(last.status).toBe(400);
    expect(last.body.detail).toMatch(/last active/);
    expect((await solo.api('DELETE', '/v1/memory/keys/not-a-uuid')).status).toBe(404);
  });

  it('rotate returns a new key and the old one stops working at once', async () => {
    const r = await newTenant(url, adminKey);
    const rotated = await r.api('POST', '/v1/memory/admin/rotate-key');
    expect(rotated.status).toBe(200);
    expect(rotated.body.api_key).toMatch(/^mv_/);
    expect((await call(url, 'GET', '/v1/memory/admin/me', { key: r.key })).status).toBe(401);
    const me = await call(url, 'GET', '/v1/memory/admin/me', { key: rotated.body.api_key });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(r.id);
  });

  it('malformed Authorization headers are 401', async () => {
    for (const authorization of ['mv_abc', 'Basic Zm9vOmJhcg==', 'Bearer', 'Bearer mv_unknown']) {
      const res = await call(url, 'GET', '/v1/memory/admin/me', { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
    }
  });
});

describe('tenants', () => {
  it('me shows name, email, tier and the tier limits', async () => {
    const me = await t.api('GET', '/v1/memory/admin/me');
    expect(me.body).toMatchObject({
      id: t.id,
      name: t.name,
      tier: 'free',
      is_admin: false,
      limits: { rate_limit_per_minute: 60, max_memories: 10_000 },
    });
  });

  it('the operator creates tenants; a duplicate email is 409; bad input is 422', async () => {
    const body = { name: 'Acme', email: `acme-${Date.now()}@example.com`, tier: 'pro' };
    const res = await call(url, 'POST', '/v1/memory/admin/tenants', { key: adminKey, body });
    expect(res.status).toBe(201);
    expect(res.body.tenant).toMatchObject({ name: 'Acme', tier: 'pro', is_admin: false, limits: { rate_limit_per_minute: 600 } });
    expect(res.body.api_key).toMatch(/^mv_/);
    const dup = await call(url, 'POST', '/v1/memory/admin/tenants', { key: adminKey, body: { ...body, email: body.email.toUpperCase() } });
    expect(dup.status).toBe(409);
    expect((await call(url, 'POST', '/v1/memory/admin/tenants', { key: adminKey, body: { name: 'x', email: 'not-an-email' } })).status).toBe(422);
    expect((await call(url, 'POST', '/v1/memory/admin/tenants', { key: adminKey, body: { name: 'x', email: 'a@b.co', tier: 'gold' } })).status).toBe(422);
  });
});

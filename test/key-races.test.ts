import { describe, expect, it } from 'vitest';
import { call, newTenant, shared } from './support/client.ts';

const { url, adminKey } = shared();
const C = '/v1/memory/collections';

type Key = { id: string; revoked_at: string | null };

/**
 * Races a client can start: the same key rotated in parallel (a thief racing the owner), two keys
 * of a tenant revoking each other. The races show on PostgreSQL (TEST_DATABASE_URL); PGlite runs
 * one transaction at a time.
 */
describe('key races', () => {
  it('parallel rotations with one key: one succeeds, the others are 401, one new key works', async () => {
    const t = await newTenant(url, adminKey);
    const before = (await t.api<Key[]>('GET', '/v1/memory/keys')).body;
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.api('POST', '/v1/memory/admin/rotate-key')));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
    for (const refused of answers.filter((a) => a.status === 401)) {
      expect(refused.body).toEqual({ detail: expect.any(String) });
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    }
    const winner = answers.find((a) => a.status === 200)!.body as { id: string; api_key: string };
    expect((await call(url, 'GET', '/v1/memory/admin/me', { key: winner.api_key })).status).toBe(200);
    expect((await call(url, 'GET', '/v1/memory/admin/me', { key: t.key })).status).toBe(401);
    const keys = (await t.api<Key[]>('GET', '/v1/memory/keys', undefined, winner.api_key)).body;
    expect(keys).toHaveLength(before.length + 1);
    expect(keys.filter((k) => !k.revoked_at).map((k) => k.id)).toEqual([winner.id]);
  });

  it('two keys revoking each other in parallel never leave the tenant without an active key', async () => {
    const refused: number[] = [];
    for (let round = 0; round < 10; round++) {
      const t = await newTenant(url, adminKey);
      const own = (await t.api<Key[]>('GET', '/v1/memory/keys')).body[0]!;
      // Both admin keys: only an admin key may revoke one.
      const other = await t.newKey('other', false, 'admin');
      const answers = await Promise.all([t.api('DELETE', `/v1/memory/keys/${other.id}`), t.api('DELETE', `/v1/memory/keys/${own.id}`, undefined, other.key)]);
      // One revocation wins; the other is the last-key 400, or a 401 when its own key was
      // already revoked as it arrived.
      const statuses = answers.map((a) => a.status).sort();
      expect([
        [204, 400],
        [204, 401],
      ]).toContainEqual(statuses);
      refused.push(statuses[1]!);
      const alive = await Promise.all([t.key, other.key].map(async (key) => (await call(url, 'GET', '/v1/memory/admin/me', { key })).status));
      expect(alive.filter((s) => s === 200)).toHaveLength(1);
    }
    // PGlite runs one request's transaction before the next request authenticates, so there the
    // second is always the 401; on PostgreSQL both get past authentication and meet the lock.
    if (process.env.TEST_DATABASE_URL) expect(refused).toContain(400);
  });
});

describe('hardening of answers', () => {
  it('a tRPC error carries no server stack trace or file path', async () => {
    const t = await newTenant(url, adminKey);
    const input = encodeURIComponent(JSON.stringify({ collection: 'none', id: '00000000-0000-7000-8000-000000000000' }));
    const res = await fetch(`${url}/trpc/memories.get?input=${input}`, { headers: { authorization: `Bearer ${t.key}` } });
    expect(res.status).toBe(404);
    const raw = await res.text();
    expect(JSON.parse(raw).error.data).toMatchObject({ httpStatus: 404, detail: expect.any(String) });
    expect(raw).not.toContain('stack');
    expect(raw).not.toContain('/work/');
  });

  it('an empty PATCH is 422 and changes nothing', async () => {
    const t = await newTenant(url, adminKey);
    const m = (await t.api('POST', `${C}/patch/memories`, { text: 'unchanged', importance: 0.3 })).body;
    const res = await t.api('PATCH', `${C}/patch/memories/${m.id}`, { unknown: 1 });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('Nothing to change: send at least one of text, importance, category, metadata');
    expect(res.body.errors).toEqual([{ path: '', message: 'Nothing to change: send at least one of text, importance, category, metadata' }]);
    const after = (await t.api('GET', `${C}/patch/memories/${m.id}`)).body;
    expect(after).toMatchObject({ text: 'unchanged', importance: 0.3, updated_at: m.updated_at });
  });
});

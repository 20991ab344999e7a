import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Agent, App, Tenant } from '../context.ts';
import { badRequest, notFound, unauthorized } from '../errors.ts';
import { iso, isUuid, newId } from '../ids.ts';
import type { Queryable } from '../ports/db/db.ts';
import { tenantView, type TenantRow } from './tenants.ts';

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** `mv_` + 43 base64url characters (32 random bytes); only its hash and prefix are stored. */
export async function insertKey(q: Queryable, tenantId: string, label: string, readOnly: boolean) {
  const apiKey = `mv_${randomBytes(32).toString('base64url')}`;
  const id = newId();
  const [row] = await q.query<KeyRow>(
    `insert into api_keys (tenant_id, id, key_hash, prefix, label, read_only) values ($1, $2, $3, $4, $5, $6) returning *`,
    [tenantId, id, hashKey(apiKey), apiKey.slice(0, 9), label, readOnly],
  );
  return { row: row!, apiKey };
}

interface KeyRow {
  tenant_id: string;
  id: string;
  key_hash: string;
  prefix: string;
  label: string;
  read_only: boolean;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export const keyView = (k: KeyRow) => ({
  id: k.id,
  label: k.label,
  read_only: k.read_only,
  prefix: k.prefix,
  masked: `${k.prefix}…`,
  created_at: iso(k.created_at)!,
  last_used_at: iso(k.last_used_at),
  revoked_at: iso(k.revoked_at),
});

/**
 * Resolves `Authorization: Bearer mv_...` to its tenant and agent. Every failure is the same
 * 401 so that an attacker learns nothing about which keys exist.
 */
export async function authenticate(app: App, header: string | undefined): Promise<{ tenant: Tenant; agent: Agent }> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) throw unauthorized(header ? 'Authorization must be "Bearer <API key>"' : 'Missing API key: send Authorization: Bearer <API key>');
  const presented = hashKey(match[1]!);
  const [row] = await app.db.query<KeyRow & TenantRow & { key_id: string; key_created_at: Date }>(
    `select k.id as key_id, k.key_hash, k.label, k.read_only, k.revoked_at, k.last_used_at, k.created_at as key_created_at,
            t.id, t.name, t.email, t.tier, t.limits, t.is_admin, t.created_at
       from api_keys k join tenants t on t.id = k.tenant_id
      where k.key_hash = $1`,
    [presented],
  );
  // The lookup is by hash; comparing the hashes again in constant time keeps the check
  // independent of how the index compares strings.
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(presented)) || row.revoked_at) {
    throw unauthorized('Invalid or revoked API key');
  }
  const stale = !row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > 60_000;
  // last_used_at is for humans; writing it at most once a minute keeps reads read-only.
  if (stale) await app.db.query('update api_keys set last_used_at = now() where tenant_id = $1 and id = $2', [row.id, row.key_id]);
  return {
    tenant: tenantView(row, app.config.tiers),
    agent: { id: row.key_id, label: row.label, read_only: row.read_only },
  };
}

export async function listKeys(app: App, tenantId: string) {
  const rows = await app.db.query<KeyRow>('select * from api_keys where tenant_id = $1 order by created_at, id', [tenantId]);
  return rows.map(keyView);
}

export async function revokeKey(app: App, tenantId: string, keyId: string) {
  if (!isUuid(keyId)) throw notFound('API key not found');
  await app.db.transaction(async (tx) => {
    // Lock the tenant's active keys so two concurrent revocations cannot both pass the check.
    const active = await tx.query<{ id: string }>(
      'select id from api_keys where tenant_id = $1 and revoked_at is null order by id for update',
      [tenantId],
    );
    const [key] = await tx.query<KeyRow>('select * from api_keys where tenant_id = $1 and id = $2', [tenantId, keyId]);
    if (!key) throw notFound('API key not found');
    if (key.revoked_at) return;
    if (active.length <= 1) throw badRequest('The last active API key cannot be revoked; create another key first');
    await tx.query('update api_keys set revoked_at = now() where tenant_id = $1 and id = $2', [tenantId, keyId]);
  });
}

/** Issues a new key and revokes the calling one in the same transaction. */
export async function rotateKey(app: App, tenantId: string, agent: Agent) {
  return app.db.transaction(async (tx) => {
    const { row, apiKey } = await insertKey(tx, tenantId, agent.label, agent.read_only);
    await tx.query('update api_keys set revoked_at = now() where tenant_id = $1 and id = $2', [tenantId, agent.id]);
    return { id: row.id, api_key: apiKey };
  });
}

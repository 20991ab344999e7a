import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Agent, App } from '../../context.ts';
import type { Tenant } from '../../schemas/access.ts';
import { badRequest, notFound, unauthorized } from '../../errors.ts';
import { iso, isUuid, newId } from '../../ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { hitSql, limiterFailed, type RateHit } from './rate-limit.ts';
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

type AuthRow = KeyRow & TenantRow & { key_id: string; rl_count?: number; rl_reset?: number };

const KEY_BY_HASH = `select k.id as key_id, k.key_hash, k.label, k.read_only, k.revoked_at, k.last_used_at,
            t.id, t.name, t.email, t.tier, t.limits, t.is_admin, t.created_at
       from api_keys k join tenants t on t.id = k.tenant_id
      where k.key_hash = $1`;

/**
 * The key lookup, the last_used_at refresh (at most once a minute) and, with `limited`, the
 * rate-limit hit of the key's window, as one statement: authentication costs one round trip.
 */
const authSql = (limited: boolean) => `with k as (${KEY_BY_HASH}),
  used as (update api_keys a set last_used_at = now() from k
            where a.tenant_id = k.id and a.id = k.key_id and k.revoked_at is null
              and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute'))
  ${limited ? `, hit as (${hitSql(`'key:' || k.key_id`, '$2', 'from k where k.revoked_at is null')})` : ''}
  select k.*${limited ? ', hit.count as rl_count, hit.reset_at as rl_reset from k left join hit on true' : ' from k'}`;

async function lookupKey(app: App, hash: string): Promise<AuthRow | undefined> {
  if (!app.config.rateLimit.enabled) return (await app.db.query<AuthRow>(authSql(false), [hash]))[0];
  try {
    return (await app.db.query<AuthRow>(authSql(true), [hash, app.config.rateLimit.windowSeconds]))[0];
  } catch (err) {
    // Without the counter the lookup works: the limiter's store failed, so fail open. If the
    // plain lookup fails as well, the database itself is down and that error is the answer.
    const row = (await app.db.query<AuthRow>(authSql(false), [hash]))[0];
    limiterFailed(app, err);
    return row;
  }
}

export interface Authenticated {
  tenant: Tenant;
  agent: Agent;
  /** This request's hit on the key's rate-limit window; null when the limiter is off or failed. */
  rate: RateHit | null;
}

/**
 * Resolves `Authorization: Bearer mv_...` to its tenant and agent, counting the request
 * against the key's rate limit. Every failure is the same 401 so that an attacker learns
 * nothing about which keys exist.
 */
export async function authenticate(app: App, header: string | undefined): Promise<Authenticated> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) throw unauthorized(header ? 'Authorization must be "Bearer <API key>"' : 'Missing API key: send Authorization: Bearer <API key>');
  const presented = hashKey(match[1]!);
  const row = await lookupKey(app, presented);
  // The lookup is by hash; comparing the hashes again in constant time keeps the check
  // independent of how the index compares strings.
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(presented)) || row.revoked_at) {
    throw unauthorized('Invalid or revoked API key');
  }
  return {
    tenant: tenantView(row, app.config.tiers),
    agent: { id: row.key_id, label: row.label, read_only: row.read_only },
    rate: row.rl_count == null ? null : { count: row.rl_count, reset_at: row.rl_reset! },
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

/**
 * Issues a new key and revokes the calling one in the same transaction. The agent keeps its
 * identity's collection grants: they move to the new key.
 */
export async function rotateKey(app: App, tenantId: string, agent: Agent) {
  return app.db.transaction(async (tx) => {
    const { row, apiKey } = await insertKey(tx, tenantId, agent.label, agent.read_only);
    await tx.query('update api_keys set revoked_at = now() where tenant_id = $1 and id = $2', [tenantId, agent.id]);
    await tx.query('update collection_grants set agent_key_id = $3 where tenant_id = $1 and agent_key_id = $2', [tenantId, agent.id, row.id]);
    return { id: row.id, api_key: apiKey };
  });
}

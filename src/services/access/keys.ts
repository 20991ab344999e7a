import { createHash, randomBytes } from 'node:crypto';
import type { Agent, App, AuthedCtx } from '../../core/context.ts';
import { badRequest, notFound, unauthorized } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { KeyRole } from '../../schemas/access.ts';
import { dataQueryable } from '../tenant-db/tenant-app.ts';

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * `mv_` + 43 base64url characters (32 random bytes); only its hash and prefix are stored. `person`:
 * a key a person uses, whose writes are of trust class `user` (docs/trust.md). `actsFor`: the
 * person a key made by a signed-in person (or by their agent) acts for (docs/people.md).
 */
export async function insertKey(
  q: Queryable,
  tenantId: string,
  label: string,
  role: KeyRole,
  readOnly: boolean,
  person = false,
  actsFor: string | null = null,
) {
  const apiKey = `mv_${randomBytes(32).toString('base64url')}`;
  const id = newId();
  const [row] = await q.query<KeyRow>(
    `insert into api_keys (tenant_id, id, key_hash, prefix, label, role, read_only, person, person_id) values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning *`,
    [tenantId, id, hashKey(apiKey), apiKey.slice(0, 9), label, role, readOnly, person, actsFor],
  );
  return { row: row!, apiKey };
}

export interface KeyRow {
  tenant_id: string;
  id: string;
  key_hash: string;
  prefix: string;
  label: string;
  role: KeyRole;
  read_only: boolean;
  person: boolean;
  person_id: string | null;
  collections: string[] | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export const keyView = (k: KeyRow) => ({
  id: k.id,
  label: k.label,
  role: k.role,
  read_only: k.read_only,
  person: k.person,
  acts_for: k.person_id,
  collections: k.collections,
  prefix: k.prefix,
  masked: `${k.prefix}…`,
  created_at: iso(k.created_at)!,
  last_used_at: iso(k.last_used_at),
  revoked_at: iso(k.revoked_at),
});

export async function listKeys(app: App, tenantId: string) {
  const rows = await app.platform.query<KeyRow>('select * from api_keys where tenant_id = $1 order by created_at, id', [tenantId]);
  return rows.map(keyView);
}

export async function revokeKey(app: App, tenantId: string, keyId: string) {
  if (!isUuid(keyId)) throw notFound('API key not found');
  await app.platform.transaction(async (tx) => {
    // The tenant row is the lock every revocation takes first: two keys revoking each other in
    // parallel are checked one after the other, and each count (a fresh snapshot once the lock is
    // held) sees what the other committed, including keys a rotation added meanwhile.
    await tx.query('select id from tenants where id = $1 for update', [tenantId]);
    const [key] = await tx.query<KeyRow>('select * from api_keys where tenant_id = $1 and id = $2', [tenantId, keyId]);
    if (!key) throw notFound('API key not found');
    if (key.revoked_at) return;
    const [active] = await tx.query<{ others: number }>(
      'select count(*)::int as others from api_keys where tenant_id = $1 and id <> $2 and revoked_at is null',
      [tenantId, keyId],
    );
    if (!active?.others) throw badRequest('The last active API key cannot be revoked; create another key first');
    await tx.query('update api_keys set revoked_at = now() where tenant_id = $1 and id = $2', [tenantId, keyId]);
  });
}

/**
 * Gives an active key another role (docs/access.md, "Key roles"). Taking the admin role from the
 * tenant's last active admin key is refused: nobody could change a setting or a key again.
 */
export async function setKeyRole(app: App, tenantId: string, keyId: string, role: KeyRole) {
  if (!isUuid(keyId)) throw notFound('API key not found');
  return app.platform.transaction(async (tx) => {
    // The same lock as a revocation: two admin keys demoting each other in parallel are decided
    // one after the other, and the second sees the first's change.
    await tx.query('select id from tenants where id = $1 for update', [tenantId]);
    const [key] = await tx.query<KeyRow>('select * from api_keys where tenant_id = $1 and id = $2 and revoked_at is null', [tenantId, keyId]);
    if (!key) throw notFound('No active API key of this tenant has this id');
    if (key.role === 'admin' && role !== 'admin') {
      const [admins] = await tx.query<{ others: number }>(
        `select count(*)::int as others from api_keys where tenant_id = $1 and id <> $2 and revoked_at is null and role = 'admin'`,
        [tenantId, keyId],
      );
      if (!admins?.others) throw badRequest('This is the last active admin key of the tenant; make another key admin first');
    }
    const [row] = await tx.query<KeyRow>('update api_keys set role = $3 where tenant_id = $1 and id = $2 returning *', [tenantId, keyId, role]);
    return keyView(row!);
  });
}

/**
 * Issues a new key and revokes the calling one in the same transaction. The agent keeps its
 * identity's collection grants: they move to the new key.
 */
export async function rotateKey(app: App, tenantId: string, agent: Agent) {
  return app.platform.transaction(async (tx) => {
    // Only the request that actually revokes the calling key may issue its successor: parallel
    // rotations with one key wait on its row, then find it revoked and get the 401 any revoked
    // key gets, so a thief racing the owner's rotation ends up without a key.
    const revoked = await tx.query('update api_keys set revoked_at = now() where tenant_id = $1 and id = $2 and revoked_at is null returning id', [
      tenantId,
      agent.id,
    ]);
    if (!revoked.length) throw unauthorized('Invalid or revoked API key');
    const { row, apiKey } = await insertKey(tx, tenantId, agent.label, agent.role, agent.read_only, agent.person, agent.for?.id ?? null);
    await tx.query('update api_keys set replaced_by = $3 where tenant_id = $1 and id = $2', [tenantId, agent.id, row.id]);
    await dataQueryable(app, tx).query('update collection_grants set agent_key_id = $3 where tenant_id = $1 and agent_key_id = $2', [
      tenantId,
      agent.id,
      row.id,
    ]);
    return { id: row.id, api_key: apiKey };
  });
}

/** The tenant's agents: its active API keys (revoked keys are not agents), without key material. */
export async function listAgents(ctx: AuthedCtx) {
  const rows = await ctx.app.platform.query<{ id: string; label: string; role: KeyRole; read_only: boolean; created_at: Date }>(
    'select id, label, role, read_only, created_at from api_keys where tenant_id = $1 and revoked_at is null order by created_at, id',
    [ctx.tenant.id],
  );
  return rows.map((r) => ({ id: r.id, label: r.label, role: r.role, read_only: r.read_only, created_at: iso(r.created_at)! }));
}

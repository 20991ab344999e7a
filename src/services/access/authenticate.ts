import { timingSafeEqual } from 'node:crypto';
import type { Agent, App, AuthedCtx } from '../../core/context.ts';
import { unauthorized } from '../../core/errors.ts';
import { MCP_PATH } from '../../core/oauth-urls.ts';
import { isUnreachable } from '../../ports/db/db.ts';
import type { KeyRole, Tenant } from '../../schemas/access.ts';
import type { PersonRole, PersonState } from '../../schemas/people.ts';
import { hashKey, type KeyRow } from './keys.ts';
import { SESSION_PREFIX } from './sessions.ts';
import { hitSql, limiterFailed, type RateHit } from './rate-limit.ts';
import { tenantView, type TenantRow } from './tenants.ts';

/** Far above an API key's `Bearer mv_` + 43 characters. */
const MAX_AUTHORIZATION = 1024;

type AuthRow = KeyRow &
  TenantRow &
  PersonColumns & { key_id: string; key_collections: string[] | null; database_sealed: string | null; rl_count?: number; rl_reset?: number };

/** The person a key or a session acts for (docs/people.md), or nulls: a key of no person. */
interface PersonColumns {
  person_id: string | null;
  person_label: string | null;
  person_role: PersonRole | null;
  person_state: PersonState | null;
  person_teams: string[] | null;
}

/** The person columns of a row `k` with a `person_id`, read with it: authentication stays one statement. */
const PERSON = {
  columns: `k.person_id, p.role as person_role, p.state as person_state, case when p.name <> '' then p.name else p.email end as person_label,
            array(select m.team_id from team_members m where m.tenant_id = k.tenant_id and m.person_id = k.person_id) as person_teams`,
  join: 'left join people p on p.tenant_id = k.tenant_id and p.id = k.person_id',
};

const COLUMNS = `k.id as key_id, k.key_hash, k.label, k.role, k.read_only, k.person, k.collections as key_collections, k.revoked_at, k.last_used_at,
            t.id, t.name, t.email, t.tier, t.limits, t.is_admin, t.created_at,
            (select d.connection_string_sealed from database_configs d where d.tenant_id = t.id) as database_sealed, ${PERSON.columns}`;

const KEY_BY_HASH = `select ${COLUMNS} from api_keys k join tenants t on t.id = k.tenant_id ${PERSON.join} where k.key_hash = $1`;

/**
 * A signed-in person's session (services/people/sessions.ts) stands for the person: an agent whose
 * id is the person's, whose writes are of trust class `user`, whose key role follows the person's
 * (owners and admins manage the tenant) and which a viewer holds read-only. Unexpired only.
 */
const SESSION_BY_HASH = `select ${COLUMNS}
       from (select s.tenant_id, s.person_id as id, s.person_id, s.token_hash as key_hash, case when p.name <> '' then p.name else p.email end as label,
                    case when p.role in ('owner', 'admin') then 'admin' else 'agent' end as role, p.role = 'viewer' as read_only, true as person,
                    null::text[] as collections, s.revoked_at, s.created_at as last_used_at
               from person_sessions s join people p on p.tenant_id = s.tenant_id and p.id = s.person_id
              where s.token_hash = $1 and s.expires_at > now()) k
       join tenants t on t.id = k.tenant_id ${PERSON.join}`;

/**
 * An OAuth access token (services/access/oauth.ts) stands for the key its client was approved as:
 * unexpired, unrevoked, and issued for the resource it is presented to (`audience`, RFC 8707). Its
 * hash stands in for the key's in the constant-time check below.
 */
const TOKEN_BY_HASH = (audience: string) => `select ${COLUMNS.replace('k.key_hash', 'o.token_hash as key_hash')}
       from oauth_tokens o join api_keys k on k.tenant_id = o.tenant_id and k.id = o.key_id join tenants t on t.id = k.tenant_id ${PERSON.join}
      where o.token_hash = $1 and o.kind = 'access' and o.revoked_at is null and o.expires_at > now() and o.resource = ${audience}`;

/** An access token is told from an API key by its prefix (oauth.ts makes it), a session's token by its own (sessions.ts). */
const isAccessToken = (presented: string) => presented.startsWith('mvat_');
const isSession = (presented: string) => presented.startsWith(SESSION_PREFIX);

/** Why an access token is refused where no OAuth audience is (REST, tRPC, the proxies): said as such, not as a wrong key. */
const TOKEN_ELSEWHERE = `This is an OAuth access token: it is accepted only by the MCP endpoint ${MCP_PATH}, at the address it was issued for. REST, tRPC and the proxies take an API key (mv_...)`;

/**
 * The key lookup and, with `limited`, the rate-limit hit of the key's window, as one statement:
 * authentication costs one round trip. `source` selects the key row, by the key's hash or by an
 * access token's. On Citus it runs on the coordinator alone (its copy of the reference tables and
 * its local counters).
 */
const authSql = (limited: boolean, source: string) => `with k as (${source})
  ${limited ? `, hit as (${hitSql(`'key:' || k.key_id`, '$2', 'from k where k.revoked_at is null', '$3::int')})` : ''}
  select k.*${limited ? ', hit.count as rl_count, hit.reset_at as rl_reset from k left join hit on true' : ' from k'}`;

const TOUCH_EVERY_MS = 60_000;

/** `audience`: the resource an access token must be for; undefined, `presented` is an API key. */
async function lookupKey(app: App, presented: string, calls: number, audience: string | undefined): Promise<AuthRow | undefined> {
  const hash = hashKey(presented);
  const run = (limited: boolean) => {
    const params: unknown[] = limited ? [hash, app.config.rateLimit.windowSeconds, calls] : [hash];
    const source = isSession(presented) ? SESSION_BY_HASH : audience === undefined ? KEY_BY_HASH : TOKEN_BY_HASH(`$${params.push(audience)}`);
    return app.platform.query<AuthRow>(authSql(limited, source), params);
  };
  let row: AuthRow | undefined;
  if (!app.config.rateLimit.enabled) row = (await run(false))[0];
  else {
    try {
      row = (await run(true))[0];
    } catch (err) {
      if (isUnreachable(err)) throw err;
      // Without the counter the lookup works: the limiter's store failed, so fail open. If the
      // plain lookup fails as well, the database itself is down and that error is the answer.
      row = (await run(false))[0];
      limiterFailed(app, err);
    }
  }
  // A session is no key: nothing to touch.
  if (row && !isSession(presented) && !row.revoked_at && (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > TOUCH_EVERY_MS))
    await touch(app, row);
  return row;
}

/**
 * The key's last_used_at, refreshed at most once a minute, in a statement of its own: on Citus
 * `api_keys` is a reference table, and a statement writing it, even one that changes no row,
 * runs on every node. Folded into the lookup it made every request wait on every node (a few ms
 * each: bench/README.md, "Citus: the coordinator's hop"); on its own, only a key's first request
 * of a minute does. With a worker down it cannot be made: skipped, and the key still serves the
 * tenants on the other nodes (docs/citus.md).
 */
async function touch(app: App, row: AuthRow): Promise<void> {
  await app.platform
    .query(
      `update api_keys set last_used_at = now() where tenant_id = $1 and id = $2 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
      [row.id, row.key_id],
    )
    .catch((err: unknown) => {
      if (!isUnreachable(err)) throw err;
    });
}

export interface Authenticated {
  tenant: Tenant;
  agent: Agent;
  /** This request's hit on the key's rate-limit window (the count after its calls); null when the limiter is off or failed. */
  rate: RateHit | null;
  /** The tenant's own database (sealed connection string), or null: its data is on the platform. */
  database: string | null;
}

/**
 * Resolves `Authorization: Bearer mv_...` to its tenant and agent, counting the request's `calls`
 * (a batch's, else 1) against the key's rate limit. Every failure is the same 401 so that an
 * attacker learns nothing about which keys exist. Where the request is addressed to a resource
 * OAuth tokens are issued for (`audience`: the MCP endpoint), an OAuth access token is accepted
 * too, as the key its client was approved as.
 */
export async function authenticate(app: App, header: string | undefined, calls = 1, audience?: string): Promise<Authenticated> {
  // No key is that long: refused before it is hashed or looked up.
  if (header && header.length > MAX_AUTHORIZATION) throw unauthorized(`The Authorization header is longer than any API key (${MAX_AUTHORIZATION} characters)`);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) throw unauthorized(header ? 'Authorization must be "Bearer <API key>"' : 'Missing API key: send Authorization: Bearer <API key>');
  // An access token is only ever accepted where its audience is this request's resource.
  const token = isAccessToken(match[1]!);
  if (token && audience === undefined) throw unauthorized(TOKEN_ELSEWHERE);
  const presented = hashKey(match[1]!);
  const row = await lookupKey(app, match[1]!, calls, token ? audience : undefined);
  // The lookup is by hash; comparing the hashes again in constant time keeps the check
  // independent of how the index compares strings.
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(presented)) || row.revoked_at) {
    throw unauthorized(isSession(match[1]!) ? 'This session has ended: sign in again' : 'Invalid or revoked API key');
  }
  if (row.person_id && row.person_state !== 'active') {
    throw unauthorized(`The person this ${isSession(match[1]!) ? 'session' : 'API key'} acts for (${row.person_label}) is ${row.person_state}`);
  }
  return {
    tenant: tenantView(row, app.config.tiers),
    agent: agentOf({ ...row, id: row.key_id, collections: row.key_collections }),
    rate: row.rl_count == null ? null : { count: row.rl_count, reset_at: row.rl_reset! },
    database: row.database_sealed,
  };
}

/**
 * Who a call without a request acts as: an agent (an API key of the tenant), or the tenant through
 * one of its own services (mail to its drop address, a connection), named by a label and, for a
 * connection, its id: what a service writes has `created_by: {id: null or that id, label}`.
 */
export type Actor = { agent_id: string } | { service: string; id?: string };

/**
 * An agent's key, or the key that replaced it by rotation (rotation moves the grants there, so
 * the agent's work goes on as it), with the tenant.
 */
const AGENT = `with recursive chain as (
    select k.id, k.tenant_id, k.label, k.role, k.read_only, k.person, k.collections, k.revoked_at, k.replaced_by, k.person_id, 0 as depth from api_keys k where k.tenant_id = $1 and k.id = $2
    union all
    select k.id, k.tenant_id, k.label, k.role, k.read_only, k.person, k.collections, k.revoked_at, k.replaced_by, k.person_id, c.depth + 1
      from chain c join api_keys k on k.tenant_id = $1 and k.id = c.replaced_by where c.depth < 1000
  )
  select t.*, k.id as key_id, k.label as key_label, k.role as key_role, k.read_only as key_read_only, k.person as key_person, k.collections as key_collections,
         k.revoked_at is not null as key_revoked, ${PERSON.columns}
    from tenants t join chain k on true ${PERSON.join} where t.id = $1 order by k.depth desc limit 1`;

/**
 * The agent of a key row: a key that acts for a person has at most the person's access
 * (docs/people.md, "Agents act for a person"): its role is the person's where that is less, and a
 * viewer's key only reads.
 */
function agentOf(k: Pick<KeyRow, 'id' | 'label' | 'role' | 'read_only' | 'person' | 'collections'> & PersonColumns): Agent {
  const person = k.person_id ? { id: k.person_id, label: k.person_label!, role: k.person_role!, teams: k.person_teams ?? [] } : null;
  const manages = !person || person.role === 'owner' || person.role === 'admin';
  return {
    id: k.id,
    label: k.label,
    role: manages ? k.role : 'agent',
    read_only: k.read_only || person?.role === 'viewer',
    person: k.person,
    collections: k.collections,
    for: person,
  };
}

/**
 * The context of a call without a request (a job, mail, an OAuth callback) of a tenant, in `app`
 * (the tenant's), so what it writes carries its actor in created_by; `refused`: why the agent may
 * act no more (its key was revoked and not rotated, or the person it acts for was suspended). Null once the tenant or the key is gone. Only the grants'
 * resolver calls it (`actFor`, grants.ts), which decides whether the actor may still act.
 */
export async function actAs(app: App, tenantId: string, actor: Actor, requestId: string): Promise<{ ctx: AuthedCtx; refused: string | null } | null> {
  if ('service' in actor) {
    const [row] = await app.platform.query<TenantRow>('select * from tenants where id = $1', [tenantId]);
    if (!row) return null;
    const agent = { id: actor.id ?? '', label: actor.service, role: 'agent' as const, read_only: false };
    return { ctx: { app, requestId, tenant: tenantView(row, app.config.tiers), agent }, refused: null };
  }
  const [row] = await app.platform.query<
    TenantRow &
      PersonColumns & {
        key_id: string;
        key_label: string;
        key_role: KeyRole;
        key_read_only: boolean;
        key_person: boolean;
        key_collections: string[] | null;
        key_revoked: boolean;
      }
  >(AGENT, [tenantId, actor.agent_id]);
  if (!row) return null;
  const agent = agentOf({
    ...row,
    id: row.key_id,
    label: row.key_label,
    role: row.key_role,
    read_only: row.key_read_only,
    person: row.key_person,
    collections: row.key_collections,
  });
  const refused = row.key_revoked
    ? 'has been revoked'
    : row.person_id && row.person_state !== 'active'
      ? `acts for ${row.person_label}, who is ${row.person_state}`
      : null;
  return { ctx: { app, requestId, tenant: tenantView(row, app.config.tiers), agent }, refused };
}

import type { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest, forbidden, notFound } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { GRANT_KINDS } from '../../schemas/access.ts';
import type { JobDef } from '../../ports/jobs/jobs.ts';
import { actAs, type Actor } from './authenticate.ts';
import { controlQueryable, tenantApp } from '../tenant-db/tenant-app.ts';

/*
 * The one place collection grants are decided. A collection is open until its first grant; then
 * only granted keys may read (can_read) or write (can_write) it. Every call that touches a
 * collection declares which, as a rule: a procedure in its `collection` (resolved by `invoke`),
 * a job or an entry without a request (mail, an OAuth callback) in its `Acting` (resolved by the
 * job runner or the entry with `actFor`). List and search code that spans collections filters
 * with `readableCollectionSql`.
 */

export type Permission = 'read' | 'write';

/**
 * Which collections a call touches and the permission it needs on them. The collection is the
 * value of an input field (checked when given: an all-collection search narrowed to one), the
 * collection of a record the input names (`of`: a connection, a batch, a job; 404 when the tenant
 * has no such record), or the collections the input names (`collections`: an import, the chat
 * proxy's store). A `partial` rule does not refuse the call: it goes on without the collections
 * refused, which its handler leaves alone (an import skips their items and reports them).
 */
export type GrantRule<I = any> = { permission: Permission } & (
  { field: keyof I & string } | { of: (ctx: AuthedCtx, input: I) => Promise<string> } | { collections: (input: I) => string[]; partial?: boolean }
);

/** A call's rules: one, or one per collection it touches in its own way (a move writes two). */
export type GrantRules<I = any> = GrantRule<I> | GrantRule<I>[];

/** What a call may touch once its rules are resolved: the collections they named and did not refuse. */
export interface Grants {
  /** False for a collection a partial rule refused, and for one no rule named (what a rule misses is refused). */
  allows(collection: string): boolean;
}

/** The grants of a call that names no collection. */
export const NO_GRANTS: Grants = { allows: () => false };

const isPartial = (rule: GrantRule) => 'collections' in rule && !!rule.partial;

/** The permissions a call can be answered 403 for (a partial rule refuses no call), for its documented errors. */
export const refusablePermissions = (rules: GrantRules): Permission[] =>
  [...new Set([rules].flat().flatMap((r) => (isPartial(r) ? [] : [r.permission])))].sort();

/**
 * The ids grants and scopes match for a call: the person it acts for and their teams, or the key
 * of no person. A person's key is matched as the person, so it reads at most what the person reads
 * (docs/people.md, "Agents act for a person"), its own `collections` limit besides.
 */
export const callerIds = (ctx: AuthedCtx): string[] => (ctx.agent.for ? [ctx.agent.for.id, ...ctx.agent.for.teams] : [ctx.agent.id]);

/**
 * SQL condition: the collection named by `column` admits the caller (`ids`, a uuid[] parameter)
 * for `permission`. Its scope admits it (`org`: everyone; `personal`: its owner; `team`: the
 * people of its teams), and it has no grant at all (open) or one naming the caller (a key, a
 * person or a team) with that permission. `limit` is the key's own list of collections, or null.
 */
function admitsSql(column: string, tenant: string, ids: string, limit: string, permission: Permission): string {
  const can = permission === 'read' ? 'can_read' : 'can_write';
  return `((${limit}::text[] is null or ${column} = any(${limit}::text[]))
          and exists (select 1 from collections s where s.tenant_id = ${tenant} and s.name = ${column}
                        and (s.scope = 'org' or s.owner_person_id = any(${ids}::uuid[]) or s.teams && ${ids}::uuid[]))
          and ((not exists (select 1 from collection_grants g where g.tenant_id = ${tenant} and g.collection = ${column})
                and not exists (select 1 from collection_member_grants g where g.tenant_id = ${tenant} and g.collection = ${column}))
           or exists (select 1 from collection_grants g where g.tenant_id = ${tenant} and g.collection = ${column}
                        and g.agent_key_id = any(${ids}::uuid[]) and g.${can})
           or exists (select 1 from collection_member_grants g where g.tenant_id = ${tenant} and g.collection = ${column}
                        and g.member_id = any(${ids}::uuid[]) and g.${can})))`;
}

/**
 * Of `collections`, those not admitting the caller for `permission`, in the order given: outside
 * its key's own list (an approved OAuth client's), or existing and not admitting it. A collection
 * that does not exist yet is refused by no grant (its first write creates it, open).
 */
async function refusedOf(ctx: AuthedCtx, collections: string[], permission: Permission): Promise<string[]> {
  if (!collections.length) return [];
  const rows = await ctx.app.db.query<{ name: string }>(
    `select c.name from unnest($2::text[]) with ordinality as c(name, n)
      where ($4::text[] is not null and not c.name = any($4::text[]))
         or (exists (select 1 from collections s where s.tenant_id = $1 and s.name = c.name) and not ${admitsSql('c.name', '$1', '$3', 'null', permission)})
      order by c.n`,
    [ctx.tenant.id, [...new Set(collections)], callerIds(ctx), collectionLimit(ctx)],
  );
  return rows.map((r) => r.name);
}

/**
 * The resolver: each rule's collections checked for its permission (read for a call that only
 * reads), as `who` names the agent in a refusal; a service identity (`who` null) is named by no
 * grant and refused by none.
 */
async function decide<I>(ctx: AuthedCtx, rules: GrantRules<I>, input: I, reads: boolean, who: string | null): Promise<Grants> {
  const allowed = new Set<string>();
  for (const rule of [rules].flat()) {
    const permission = reads ? 'read' : rule.permission;
    const named =
      'field' in rule
        ? [input[rule.field] as string | undefined].filter((c) => c !== undefined)
        : 'of' in rule
          ? [await rule.of(ctx, input)]
          : rule.collections(input);
    const refused = who === null ? [] : await refusedOf(ctx, named, permission);
    if (refused.length && !isPartial(rule)) throw forbidden(`${who} is not granted ${permission} access to collection "${refused[0]}"`);
    for (const name of named) if (!refused.includes(name)) allowed.add(name);
  }
  return { allows: (collection) => allowed.has(collection) };
}

/**
 * The grants of a call through `invoke`: its procedure's rules on its input, for the calling key.
 * A call that only reads (a dry run, see `readWhen`) needs read wherever its rules say write.
 */
export const resolveGrants = <I>(ctx: AuthedCtx, rules: GrantRules<I>, input: I, reads: boolean) => decide(ctx, rules, input, reads, 'This API key');

/** Who a call without a request acts as, and the collection it touches. */
export interface Subject {
  actor: Actor;
  collection: string;
}

/**
 * What a job or an entry without a request (mail, an OAuth callback) declares: whom it acts as
 * and the grant it needs, both read from its payload (and the record the payload names).
 */
export interface Acting<P> {
  /** The actor and the collection; none when the record is gone and nothing is left to do. `app` is the tenant's. */
  subject: (app: App, payload: P) => Promise<Subject | undefined>;
  grant: GrantRule<Subject>;
}

/** A job that acts for its tenant: the job runner resolves its `acts` before its code runs (host/tasks.ts). */
export type ActingJob<S extends z.ZodType> = JobDef<S> & { acts: Acting<z.output<S>> };

export const actingJob = <S extends z.ZodType>(job: JobDef<S>, acts: Acting<z.output<S>>): ActingJob<S> => ({ ...job, acts });

/**
 * Resolves an `Acting` for a payload of a tenant: the context to run in, or why the actor may no
 * longer act (an agent whose key was revoked, or who is not granted the collection any more: the
 * caller records it where the tenant sees it), or null when the record or the tenant is gone.
 */
export async function actFor<P extends { tenant_id: string }>(
  app: App,
  acting: Acting<P>,
  payload: P,
  requestId: string,
): Promise<{ ctx: AuthedCtx } | { refused: string } | null> {
  const data = await tenantApp(app, payload.tenant_id);
  const subject = await acting.subject(data, payload);
  const acted = subject && (await actAs(data, payload.tenant_id, subject.actor, requestId));
  if (!subject || !acted) return null;
  // An agent is named by its key's label in a refusal; a service (mail, a connection) is refused by no grant.
  const agent = 'agent_id' in subject.actor ? `The API key "${acted.ctx.agent.label}"` : null;
  if (agent && acted.refused) return { refused: `${agent} ${acted.refused}` };
  try {
    await decide(acted.ctx, acting.grant, subject, false, agent);
  } catch (err) {
    if (err instanceof AppError && err.code === 'FORBIDDEN') return { refused: err.detail };
    throw err;
  }
  return { ctx: acted.ctx };
}

/**
 * SQL condition (for a query whose tenant, caller ids and limit parameters are given: the values
 * of `callerIds` and `collectionLimit`) that keeps the collections the caller may read.
 * `alias.collection` (or `alias.name` on the collections table) is the column compared.
 */
export const readableCollectionSql = (column: string, tenantParam: string, idsParam: string, limitParam: string): string =>
  admitsSql(column, tenantParam, idsParam, limitParam, 'read');

/** The value of `readableCollectionSql`'s `limitParam` for a call: the collections its key is limited to, or null. */
export const collectionLimit = (ctx: AuthedCtx) => ctx.agent.collections ?? null;

/** Whom a grant names (docs/access.md, "Grants"; docs/people.md, "Grants to people and teams"). */
export type GrantKind = (typeof GRANT_KINDS)[number];

export interface GrantView {
  kind: GrantKind;
  id: string;
  /** The key's id for a key's grant, null for a person's or a team's (as before people, for clients that read it). */
  agent_key_id: string | null;
  label: string;
  can_read: boolean;
  can_write: boolean;
}

/** The grantee of a `putGrant`: exactly one of the three ids. */
export interface Grantee {
  agent_key_id?: string;
  person_id?: string;
  team_id?: string;
}

/**
 * Runs a grant change on a collection in one transaction, serialised per collection (the
 * collection row is locked; 404 if there is none). A change that would leave the collection
 * restricted with nobody able to write it (no active writable key, no active person other than a
 * viewer, no team with such a person granted can_write) is refused: nobody could manage its
 * grants again.
 */
async function changeGrants<T>(ctx: AuthedCtx, collection: string, change: (tx: Queryable) => Promise<T>): Promise<T> {
  return ctx.app.db.transaction(async (tx) => {
    const [locked] = await tx.query('select name from collections where tenant_id = $1 and name = $2 for update', [ctx.tenant.id, collection]);
    if (!locked) throw notFound(`Collection "${collection}" not found`);
    const result = await change(tx);
    // Grants live with the collection, keys and people on the platform (the same database unless the tenant has its own).
    const grants = await tx.query<{ id: string; can_write: boolean }>(
      `select agent_key_id as id, can_write from collection_grants where tenant_id = $1 and collection = $2
       union all select member_id, can_write from collection_member_grants where tenant_id = $1 and collection = $2`,
      [ctx.tenant.id, collection],
    );
    const writers = grants.filter((g) => g.can_write).map((g) => g.id);
    const [managed] = writers.length
      ? await controlQueryable(ctx.app, tx).query(
          `select 1 from api_keys where tenant_id = $1 and id = any($2::uuid[]) and revoked_at is null and not read_only
           union all select 1 from people p where p.tenant_id = $1 and p.state = 'active' and p.role <> 'viewer'
             and (p.id = any($2::uuid[]) or exists (select 1 from team_members m where m.tenant_id = $1 and m.person_id = p.id and m.team_id = any($2::uuid[])))
           limit 1`,
          [ctx.tenant.id, writers],
        )
      : [];
    if (grants.length && !managed) {
      throw badRequest(
        `This change would leave collection "${collection}" restricted with nobody able to write it, and nobody could manage it: ` +
          'grant can_write to a writable key, an active person or a team first, or remove every grant to reopen it',
      );
    }
    return result;
  });
}

/** The grantee's kind, id and label; 404 unless it is an active key of no person, an active or invited person, or a team of the tenant. */
async function granteeOf(ctx: AuthedCtx, tx: Queryable, grantee: Grantee): Promise<{ kind: GrantKind; id: string; label: string }> {
  const named = (['agent_key_id', 'person_id', 'team_id'] as const).filter((f) => grantee[f] !== undefined);
  if (named.length !== 1) throw badRequest('Name exactly one grantee: agent_key_id, person_id or team_id');
  const field = named[0]!;
  const id = grantee[field]!;
  const kind: GrantKind = field === 'agent_key_id' ? 'key' : field === 'person_id' ? 'person' : 'team';
  const control = controlQueryable(ctx.app, tx);
  const sql = {
    key: 'select label, person_id from api_keys where tenant_id = $1 and id = $2 and revoked_at is null',
    person: `select case when name <> '' then name else email end as label, null as person_id from people where tenant_id = $1 and id = $2 and state in ('active', 'invited')`,
    team: 'select name as label, null as person_id from teams where tenant_id = $1 and id = $2',
  }[kind];
  const [row] = isUuid(id) ? await control.query<{ label: string; person_id: string | null }>(sql, [ctx.tenant.id, id]) : [];
  if (!row)
    throw notFound(
      `${{ key: 'API key', person: 'Person', team: 'Team' }[kind]} ${id} not found among the tenant's ${{ key: 'active keys', person: 'people', team: 'teams' }[kind]}`,
    );
  // A person's key reads what the person reads: a grant names the person (or a team) instead.
  if (row.person_id) throw badRequest(`API key ${id} acts for a person: grant that person (person_id) or one of their teams (team_id) instead`);
  return { kind, id, label: row.label };
}

/**
 * Adds or changes a grant to a key, a person or a team; the first grant restricts the collection.
 */
export async function putGrant(ctx: AuthedCtx, collection: string, input: Grantee & { can_read: boolean; can_write: boolean }): Promise<GrantView> {
  return changeGrants(ctx, collection, async (tx) => {
    const grantee = await granteeOf(ctx, tx, input);
    const [row] =
      grantee.kind === 'key'
        ? await tx.query<{ can_read: boolean; can_write: boolean }>(
            `insert into collection_grants (tenant_id, collection, agent_key_id, can_read, can_write) values ($1, $2, $3, $4, $5)
             on conflict (tenant_id, collection, agent_key_id) do update set can_read = excluded.can_read, can_write = excluded.can_write
             returning can_read, can_write`,
            [ctx.tenant.id, collection, grantee.id, input.can_read, input.can_write],
          )
        : await tx.query<{ can_read: boolean; can_write: boolean }>(
            `insert into collection_member_grants (tenant_id, collection, member_id, member_kind, can_read, can_write) values ($1, $2, $3, $4, $5, $6)
             on conflict (tenant_id, collection, member_id) do update set can_read = excluded.can_read, can_write = excluded.can_write
             returning can_read, can_write`,
            [ctx.tenant.id, collection, grantee.id, grantee.kind, input.can_read, input.can_write],
          );
    return { ...grantee, agent_key_id: grantee.kind === 'key' ? grantee.id : null, ...row! };
  });
}

/** The grants of a collection; `restricted` is true exactly when there is at least one. */
export async function listGrants(ctx: AuthedCtx, collection: string) {
  // One read answers both whether the collection exists (its row, grants or not) and its grants.
  const rows = await ctx.app.db.query<{ kind: GrantKind | null; id: string | null; can_read: boolean; can_write: boolean }>(
    `select g.kind, g.id, g.can_read, g.can_write
       from collections c
       left join (select 'key' as kind, agent_key_id as id, can_read, can_write, created_at, collection, tenant_id from collection_grants
                  union all
                  select member_kind, member_id, can_read, can_write, created_at, collection, tenant_id from collection_member_grants) g
         on g.tenant_id = c.tenant_id and g.collection = c.name
      where c.tenant_id = $1 and c.name = $2 order by g.created_at, g.id`,
    [ctx.tenant.id, collection],
  );
  if (!rows.length) throw notFound(`Collection "${collection}" not found`);
  const granted = rows.filter((r): r is typeof r & { kind: GrantKind; id: string } => r.id !== null);
  // The labels come from the platform (a revoked key's and a removed person's too: their grants are still listed).
  const ids = granted.map((g) => g.id);
  const labels = ids.length
    ? await ctx.app.platform.query<{ id: string; label: string }>(
        `select id, label from api_keys where tenant_id = $1 and id = any($2::uuid[])
         union all select id, case when name <> '' then name else email end from people where tenant_id = $1 and id = any($2::uuid[])
         union all select id, name from teams where tenant_id = $1 and id = any($2::uuid[])`,
        [ctx.tenant.id, ids],
      )
    : [];
  const label = new Map(labels.map((k) => [k.id, k.label]));
  const grants: GrantView[] = granted.map((g) => ({
    kind: g.kind,
    id: g.id,
    agent_key_id: g.kind === 'key' ? g.id : null,
    label: label.get(g.id) ?? '',
    can_read: g.can_read,
    can_write: g.can_write,
  }));
  return { collection, restricted: grants.length > 0, grants };
}

/** Removes the grant of a key, a person or a team (by its id); removing the last one reopens the collection. */
export async function deleteGrant(ctx: AuthedCtx, collection: string, granteeId: string): Promise<void> {
  await changeGrants(ctx, collection, async (tx) => {
    const rows: unknown[] = [];
    if (isUuid(granteeId)) {
      for (const table of ['collection_grants', 'collection_member_grants']) {
        const id = table === 'collection_grants' ? 'agent_key_id' : 'member_id';
        rows.push(
          ...(await tx.query(`delete from ${table} where tenant_id = $1 and collection = $2 and ${id} = $3 returning 1`, [
            ctx.tenant.id,
            collection,
            granteeId,
          ])),
        );
      }
    }
    if (!rows.length) throw notFound(`No grant for ${granteeId} on collection "${collection}"`);
  });
}

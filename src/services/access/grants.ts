import type { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest, forbidden, notFound } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
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

/** Of `collections`, those restricted and not granted `permission` to the agent, in the order given. */
async function refusedOf(ctx: AuthedCtx, collections: string[], permission: Permission): Promise<string[]> {
  if (!collections.length) return [];
  // A key limited to some collections (an approved OAuth client) is refused the others, granted or open.
  const limit = ctx.agent.collections;
  if (limit) {
    const outside = collections.filter((c) => !limit.includes(c));
    if (outside.length) return [...new Set(outside)];
  }
  const rows = await ctx.app.db.query<{ name: string }>(
    `select c.name from unnest($2::text[]) with ordinality as c(name, n)
      where exists (select 1 from collection_grants g where g.tenant_id = $1 and g.collection = c.name)
        and not exists (select 1 from collection_grants g where g.tenant_id = $1 and g.collection = c.name and g.agent_key_id = $3
                          and ${permission === 'read' ? 'g.can_read' : 'g.can_write'})
      order by c.n`,
    [ctx.tenant.id, [...new Set(collections)], ctx.agent.id],
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
  if (agent && acted.revoked) return { refused: `${agent} has been revoked` };
  try {
    await decide(acted.ctx, acting.grant, subject, false, agent);
  } catch (err) {
    if (err instanceof AppError && err.code === 'FORBIDDEN') return { refused: err.detail };
    throw err;
  }
  return { ctx: acted.ctx };
}

/**
 * SQL condition (for a query whose `$tenant` and `$agent` parameters are given) that keeps the
 * collections the agent may read: open ones and those granting it can_read. `alias.collection`
 * (or `alias.name` on the collections table) is the column compared.
 */
export function readableCollectionSql(column: string, tenantParam: string, agentParam: string, limitParam: string): string {
  return `((${limitParam}::text[] is null or ${column} = any(${limitParam}::text[]))
          and (not exists (select 1 from collection_grants g where g.tenant_id = ${tenantParam} and g.collection = ${column})
           or exists (select 1 from collection_grants g where g.tenant_id = ${tenantParam} and g.collection = ${column}
                        and g.agent_key_id = ${agentParam} and g.can_read)))`;
}

/** The value of `readableCollectionSql`'s `limitParam` for a call: the collections its key is limited to, or null. */
export const collectionLimit = (ctx: AuthedCtx) => ctx.agent.collections ?? null;

export interface GrantView {
  agent_key_id: string;
  label: string;
  can_read: boolean;
  can_write: boolean;
}

/**
 * Runs a grant change on a collection in one transaction, serialised per collection (the
 * collection row is locked; 404 if there is none). A change that would leave the collection
 * restricted with no active, writable key granted can_write is refused: nobody could manage
 * its grants again.
 */
async function changeGrants<T>(ctx: AuthedCtx, collection: string, change: (tx: Queryable) => Promise<T>): Promise<T> {
  return ctx.app.db.transaction(async (tx) => {
    const [locked] = await tx.query('select name from collections where tenant_id = $1 and name = $2 for update', [ctx.tenant.id, collection]);
    if (!locked) throw notFound(`Collection "${collection}" not found`);
    const result = await change(tx);
    // Grants live with the collection, keys on the platform (the same database unless the tenant has its own).
    const grants = await tx.query<{ agent_key_id: string; can_write: boolean }>(
      'select agent_key_id, can_write from collection_grants where tenant_id = $1 and collection = $2',
      [ctx.tenant.id, collection],
    );
    const writers = grants.filter((g) => g.can_write).map((g) => g.agent_key_id);
    const [managed] = writers.length
      ? await controlQueryable(ctx.app, tx).query(
          'select 1 from api_keys where tenant_id = $1 and id = any($2::uuid[]) and revoked_at is null and not read_only limit 1',
          [ctx.tenant.id, writers],
        )
      : [];
    if (grants.length && !managed) {
      throw badRequest(
        `This change would leave collection "${collection}" restricted with no active key granted can_write, and nobody could manage it: ` +
          'grant can_write to a writable key first, or remove every grant to reopen it',
      );
    }
    return result;
  });
}

/**
 * Adds or changes an agent's grant; the first grant restricts the collection. The key must be
 * an active key of the tenant (a revoked key is no agent).
 */
export async function putGrant(ctx: AuthedCtx, collection: string, input: { agent_key_id: string; can_read: boolean; can_write: boolean }): Promise<GrantView> {
  const keyId = input.agent_key_id;
  return changeGrants(ctx, collection, async (tx) => {
    const [key] = isUuid(keyId)
      ? await controlQueryable(ctx.app, tx).query<{ label: string }>('select label from api_keys where tenant_id = $1 and id = $2 and revoked_at is null', [
          ctx.tenant.id,
          keyId,
        ])
      : [];
    if (!key) throw notFound(`API key ${keyId} not found among the tenant's active keys`);
    const [row] = await tx.query<Omit<GrantView, 'label'>>(
      `insert into collection_grants (tenant_id, collection, agent_key_id, can_read, can_write) values ($1, $2, $3, $4, $5)
       on conflict (tenant_id, collection, agent_key_id) do update set can_read = excluded.can_read, can_write = excluded.can_write
       returning agent_key_id, can_read, can_write`,
      [ctx.tenant.id, collection, keyId, input.can_read, input.can_write],
    );
    return { ...row!, label: key.label };
  });
}

/** The grants of a collection; `restricted` is true exactly when there is at least one. */
export async function listGrants(ctx: AuthedCtx, collection: string) {
  // One read answers both whether the collection exists (its row, grants or not) and its grants.
  const rows = await ctx.app.db.query<{ [K in Exclude<keyof GrantView, 'label'>]: GrantView[K] | null }>(
    `select g.agent_key_id, g.can_read, g.can_write
       from collections c
       left join collection_grants g on g.tenant_id = c.tenant_id and g.collection = c.name
      where c.tenant_id = $1 and c.name = $2 order by g.created_at, g.agent_key_id`,
    [ctx.tenant.id, collection],
  );
  if (!rows.length) throw notFound(`Collection "${collection}" not found`);
  const granted = rows.filter((r): r is Omit<GrantView, 'label'> => r.agent_key_id !== null);
  // The keys' labels come from the platform (a revoked key's too: its grant is still listed).
  const keys = granted.length
    ? await ctx.app.platform.query<{ id: string; label: string }>('select id, label from api_keys where tenant_id = $1 and id = any($2::uuid[])', [
        ctx.tenant.id,
        granted.map((g) => g.agent_key_id),
      ])
    : [];
  const label = new Map(keys.map((k) => [k.id, k.label]));
  const grants = granted.map((g) => ({ agent_key_id: g.agent_key_id, label: label.get(g.agent_key_id) ?? '', can_read: g.can_read, can_write: g.can_write }));
  return { collection, restricted: grants.length > 0, grants };
}

/** Removes one agent's grant; removing the last one reopens the collection. */
export async function deleteGrant(ctx: AuthedCtx, collection: string, keyId: string): Promise<void> {
  await changeGrants(ctx, collection, async (tx) => {
    const rows = isUuid(keyId)
      ? await tx.query('delete from collection_grants where tenant_id = $1 and collection = $2 and agent_key_id = $3 returning agent_key_id', [
          ctx.tenant.id,
          collection,
          keyId,
        ])
      : [];
    if (!rows.length) throw notFound(`No grant for API key ${keyId} on collection "${collection}"`);
  });
}

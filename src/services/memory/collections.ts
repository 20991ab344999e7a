import type { AuthedCtx } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import type { CollectionScope } from '../../schemas/people.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { callerIds, collectionLimit, readableCollectionSql } from '../access/grants.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';
import { enqueueFileCleanup, type FileRefs } from '../storage/file-cleanup.ts';
import { noteBulkWrite } from './table-stats.ts';

interface CollectionRow {
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  /** Every memory it holds, archived ones included (what search's cost models read). */
  memory_count: number;
  archived_count: number;
  restricted: boolean;
  scope: CollectionScope;
  owner_person_id: string | null;
  teams: string[];
  created_at: Date;
  updated_at: Date;
}

const SELECT = `select name, description, metadata, memory_count::int as memory_count, archived_count::int as archived_count, created_at, updated_at,
                       scope, owner_person_id, teams,
                       (exists (select 1 from collection_grants g where g.tenant_id = $1 and g.collection = c.name)
                        or exists (select 1 from collection_member_grants g where g.tenant_id = $1 and g.collection = c.name)) as restricted
                  from collections c`;

/** A collection's scope as stored: who reads it besides its grants (docs/people.md, "Scopes"; checked by services/people/scope.ts). */
export interface ScopeColumns {
  scope: CollectionScope;
  owner_person_id: string | null;
  teams: string[];
}

const view = (r: CollectionRow) => ({
  name: r.name,
  description: r.description,
  metadata: r.metadata,
  // What its listing shows by default; the archived ones apart (docs/rest.md).
  memory_count: r.memory_count - r.archived_count,
  archived_count: r.archived_count,
  restricted: r.restricted,
  scope: r.scope,
  owner: r.owner_person_id,
  teams: r.teams,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

/**
 * Creates the collection on a first write, before memories that reference it are inserted. Takes
 * no lock on an existing collection, so concurrent writers to one collection do not queue here.
 * What a person captures (`capture`: a harness hook's call, a connection they make) lands in a
 * collection personal to them, private until promoted (docs/people.md, "Scopes"); any other
 * first write makes an org collection.
 */
export async function ensureCollection(q: Queryable, ctx: AuthedCtx, name: string, capture = ctx.call?.via === 'hook'): Promise<void> {
  const owner = capture && ctx.app.config.personalCapture ? (ctx.agent.for?.id ?? null) : null;
  await q.query(
    `insert into collections (tenant_id, name, scope, owner_person_id) values ($1, $2, case when $3::uuid is null then 'org' else 'personal' end, $3::uuid)
     on conflict (tenant_id, name) do nothing`,
    [ctx.tenant.id, name, owner],
  );
}

/**
 * Every write to a collection's memories goes through here, once per statement (a bulk insert
 * of any size calls it once): it keeps the collection's memory count and archived count (the
 * memories added or removed, and those of them archived, or archived or restored), bumps the
 * version that search caches key on and moves `updated_at` (creating the collection if needed),
 * in the write's transaction. The update locks the collection's row until commit, so writers
 * call it last, after their index work: concurrent bulk inserts into one collection then only
 * queue for the commit.
 */
export async function touchCollection(q: Queryable, tenantId: string, name: string, countDelta: number, archivedDelta = 0): Promise<void> {
  await q.query(
    `insert into collections (tenant_id, name, memory_count, archived_count, version) values ($1, $2, greatest($3::int, 0), greatest($4::int, 0), 1)
     on conflict (tenant_id, name) do update
       set memory_count = collections.memory_count + $3::int, archived_count = collections.archived_count + $4::int,
           version = collections.version + 1, updated_at = excluded.updated_at`,
    [tenantId, name, countDelta, archivedDelta],
  );
}

/** How many of these memories (written, deleted or moved) are archived: their part of the archived count's change. */
export const archivedAmong = (memories: Array<{ archived?: boolean }>) => memories.filter((m) => m.archived).length;

export async function listCollections(ctx: AuthedCtx) {
  // Restricted collections the agent may not read are left out of its listing.
  const rows = await ctx.app.db.query<CollectionRow>(`${SELECT} where tenant_id = $1 and ${readableCollectionSql('c.name', '$1', '$2', '$3')} order by name`, [
    ctx.tenant.id,
    callerIds(ctx),
    collectionLimit(ctx),
  ]);
  return rows.map(view);
}

export async function getCollection(q: Queryable, tenantId: string, name: string) {
  const [row] = await q.query<CollectionRow>(`${SELECT} where tenant_id = $1 and name = $2`, [tenantId, name]);
  if (!row) throw notFound(`Collection "${name}" not found`);
  return view(row);
}

type CollectionInput = { name: string; description?: string | null; metadata?: Record<string, unknown>; scope?: ScopeColumns };

export async function createCollection(ctx: AuthedCtx, input: CollectionInput) {
  const scope = input.scope ?? { scope: 'org', owner_person_id: null, teams: [] };
  const rows = await ctx.app.db.query(
    `insert into collections (tenant_id, name, description, metadata, scope, owner_person_id, teams) values ($1, $2, $3, $4::jsonb, $5, $6, $7::uuid[])
     on conflict (tenant_id, name) do nothing returning name`,
    [ctx.tenant.id, input.name, input.description ?? null, input.metadata ?? {}, scope.scope, scope.owner_person_id, scope.teams],
  );
  if (!rows.length) throw conflict(`Collection "${input.name}" already exists`);
  return getCollection(ctx.app.db, ctx.tenant.id, input.name);
}

export async function updateCollection(ctx: AuthedCtx, input: CollectionInput) {
  const rows = await ctx.app.db.query(
    `update collections set description = case when $3 then $4 else description end,
                            metadata = coalesce($5::jsonb, metadata), updated_at = now(),
                            scope = coalesce($6, scope), owner_person_id = case when $6 is null then owner_person_id else $7::uuid end,
                            teams = coalesce($8::uuid[], teams)
      where tenant_id = $1 and name = $2 returning name`,
    [
      ctx.tenant.id,
      input.name,
      input.description !== undefined,
      input.description ?? null,
      input.metadata ?? null,
      input.scope?.scope ?? null,
      input.scope?.owner_person_id ?? null,
      input.scope?.teams ?? null,
    ],
  );
  if (!rows.length) throw notFound(`Collection "${input.name}" not found`);
  return getCollection(ctx.app.db, ctx.tenant.id, input.name);
}

/** Deletes the collection and, by cascade, every memory in it (each a memory.deleted event), and then their files. */
export async function deleteCollection(ctx: AuthedCtx, name: string): Promise<void> {
  await ctx.app.db.transaction(async (tx) => {
    // Locked first, so no memory is added between reading the memories and the cascade taking them.
    await tx.query('select 1 from collections where tenant_id = $1 and name = $2 for update', [ctx.tenant.id, name]);
    await emitMemoryEvents(tx, ctx, 'memory.deleted', name, () =>
      tx.query<{ id: string }>('select id from memories where tenant_id = $1 and collection = $2 order by id', [ctx.tenant.id, name]),
    );
    // Read before the cascade takes the rows: the files of every memory that has any.
    const files = await tx.query<FileRefs>(
      `select images, metadata from memories where tenant_id = $1 and collection = $2 and (images <> '[]'::jsonb or metadata ? 'key')`,
      [ctx.tenant.id, name],
    );
    const rows = await tx.query<{ memory_count: number }>('delete from collections where tenant_id = $1 and name = $2 returning memory_count::int', [
      ctx.tenant.id,
      name,
    ]);
    if (!rows.length) throw notFound(`Collection "${name}" not found`);
    await noteBulkWrite(tx, ctx.app, rows[0]!.memory_count);
    await enqueueFileCleanup(tx, ctx.app, ctx.tenant.id, files);
  });
}

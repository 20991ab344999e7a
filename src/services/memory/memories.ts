import type { AuthedCtx } from '../../core/context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { isUuid, newId } from '../../core/ids.ts';
import { toVectorLiteral, type Queryable } from '../../ports/db/db.ts';
import { columnType, type ColumnType } from '../../ports/db/vector-storage.ts';
import type { Memory, MemoryCreate } from '../../schemas/memory.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';
import { graphedInsert } from './graph-tenants.ts';
import { enqueueFileCleanup, type FileRefs } from '../storage/file-cleanup.ts';
import { archivedAmong, ensureCollection, getCollection, touchCollection } from './collections.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from './memory-view.ts';
import { noteBulkWrite } from './table-stats.ts';
import type { Quarantine, TrustClass } from '../../schemas/trust.ts';
import { handOver } from '../ledger/handover.ts';
import { trustPolicyOf } from '../trust/policy.ts';
import { secondOpinionJob } from '../trust/second-opinion-job.ts';
import { callerTrust, screenText, type Screened } from '../trust/screen.ts';
import type { Steering } from '../trust/steering.ts';

export interface NewMemory extends MemoryCreate {
  /** Files attached to the memory, with their storage keys. */
  images?: MemoryRow['images'];
  pinned?: boolean;
  archived?: boolean;
}

/**
 * Where new memories come from (docs/trust.md): the pipeline's trust class when it reads outside
 * text (files, mail, connectors, imports), else the caller's; `heldBecause`, the reasons the
 * memory they were made from is held for (remember's facts); `steering`, the steering detector's
 * verdict on each item's text when the caller found them off the event loop (a file's chunks).
 */
export interface Origin {
  trust?: TrustClass;
  heldBecause?: string[];
  steering?: Steering[];
}

/**
 * Inserts memories with their embeddings in the caller's transaction. The embeddings are
 * computed by the caller before the transaction opens, so no transaction waits on a model. Every
 * write of a new memory comes here, so every one is screened (docs/trust.md, "Quarantine").
 */
export async function insertMemories(
  q: Queryable,
  ctx: AuthedCtx,
  collection: string,
  items: NewMemory[],
  embeddings: number[][],
  origin: Origin = {},
): Promise<Memory[]> {
  if (!items.length) return [];
  await ensureCollection(q, ctx, collection);
  const graphed = await graphedInsert(q, ctx.app, ctx.tenant.id, items.length);
  const policy = await trustPolicyOf(ctx.app, ctx.tenant.id, q);
  const trust = origin.trust ?? callerTrust(ctx);
  const screened = items.map((m, i) => screenText(m.text, trust, policy, origin.heldBecause, origin.steering?.[i]));
  const rows: MemoryRow[] = [];
  for (let i = 0; i < items.length; i += INSERT_ROWS)
    rows.push(...(await insertRows(q, ctx, collection, items.slice(i, i + INSERT_ROWS), embeddings.slice(i), screened.slice(i), graphed)));
  await touchCollection(q, ctx.tenant.id, collection, items.length, archivedAmong(items));
  // Every create goes through here (bulk, import, ingest, connector pages): a large one queues
  // the planner statistics' refresh.
  await noteBulkWrite(q, ctx.app, items.length);
  const memories = rows.map(memoryView);
  await emitMemoryEvents(q, ctx, 'memory.created', collection, memories);
  const held = memories.filter((m) => m.quarantine?.state === 'held');
  if (held.length) await emitMemoryEvents(q, ctx, 'memory.quarantined', collection, held);
  const suspects = memories.filter((_, i) => screened[i]!.suspect);
  for (let i = 0; i < suspects.length; i += SECOND_OPINIONS)
    await ctx.app.jobs.enqueue(q, secondOpinionJob, { tenant_id: ctx.tenant.id, memory_ids: suspects.slice(i, i + SECOND_OPINIONS).map((m) => m.id) });
  return memories;
}

/** Memories per second-opinion job: its payload's bound. */
const SECOND_OPINIONS = 250;

/**
 * Rows per insert statement. The statement's text and its 22 parameters are the same whatever the
 * count (one array a column), so this only bounds one statement's size: a 10 MB text file is
 * about 5,000 chunks, and larger statements are slower on PGlite (bench/README.md, "Ingestion soak").
 */
const INSERT_ROWS = 250;

/**
 * The batch's rows as one array a column, unnested: one statement whose text is the same for any
 * number of rows, so PostgreSQL parses it once a connection and plans it without a value list of
 * 18 parameters a row (bench/README.md, "Bulk insert: where the time goes"). Every array is sent
 * as text[] and each element cast in the statement: both drivers send a text array the same way
 * (postgres.js reads a nested JS array, a memory's images, as a second dimension, and PGlite
 * writes a vector[] element unquoted). The embedding is cast to the column's type (App's
 * vectorStorage).
 */
const insertStatement = (
  column: ColumnType,
) => `insert into memories (tenant_id, collection, created_by_id, created_by_label, id, text, importance, category, source, metadata,
                                  container_tag, embedding, valid_to, pinned, archived, images, observed_at, valid_from, trust, held,
                                  quarantine, graphed, on_behalf_of_id, on_behalf_of_label)
  select $1, $2, nullif($3, '')::uuid, $4, r.id::uuid, r.text, r.importance::float8, r.category, r.source, r.metadata::jsonb,
         r.container_tag, r.embedding::${column}, r.valid_to::timestamptz, r.pinned::boolean, r.archived::boolean, r.images::jsonb,
         coalesce(r.observed_at::timestamptz, now()), coalesce(r.valid_from::timestamptz, r.observed_at::timestamptz, now()),
         r.trust, r.held::boolean, r.quarantine::jsonb, $22::boolean, $23::uuid, $24
    from unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
                $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[])
           as r(id, text, importance, category, source, metadata, container_tag, embedding, valid_to, pinned, archived, images, observed_at,
                valid_from, trust, held, quarantine)
  returning ${MEMORY_COLUMNS}`;

const INSERT_SQL = { vector: insertStatement('vector'), halfvec: insertStatement('halfvec') };

/** The insert statement for an embedding column of this type. */
export const insertSql = (column: ColumnType) => INSERT_SQL[column];

async function insertRows(
  q: Queryable,
  ctx: AuthedCtx,
  collection: string,
  items: NewMemory[],
  embeddings: number[][],
  screened: Screened[],
  graphed: boolean,
): Promise<MemoryRow[]> {
  const { ids, params } = insertParams(ctx, collection, items, embeddings, screened, graphed);
  const rows = await q.query<MemoryRow>(insertSql(columnType(ctx.app.vectorStorage)), params);
  // In the input's order, whatever order the statement returned them in.
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)!);
}

/** INSERT_SQL's parameters for these rows, with the new memories' ids in the items' order. */
export function insertParams(
  ctx: Pick<AuthedCtx, 'tenant' | 'agent'>,
  collection: string,
  items: NewMemory[],
  embeddings: number[][],
  screened: Screened[],
  graphed: boolean,
): { ids: string[]; params: unknown[] } {
  const columns: Array<Array<string | null>> = Array.from({ length: 17 }, () => []);
  const ids = items.map((m, i) => {
    const id = newId();
    const row = [
      id,
      m.text,
      String(m.importance),
      m.category,
      m.source,
      JSON.stringify(m.metadata),
      m.container_tag ?? null,
      toVectorLiteral(embeddings[i]!),
      m.valid_to ?? null,
      String(m.pinned ?? false),
      String(m.archived ?? false),
      JSON.stringify(m.images ?? []),
      m.observed_at ?? null,
      m.valid_from ?? null,
      screened[i]!.trust,
      String(screened[i]!.held),
      screened[i]!.quarantine && JSON.stringify(screened[i]!.quarantine),
    ];
    row.forEach((v, c) => columns[c]!.push(v));
    return id;
  });
  // A person's agent writes for them; the person's own session is the writer itself (docs/people.md).
  const behalf = ctx.agent.for && ctx.agent.for.id !== ctx.agent.id ? ctx.agent.for : null;
  return { ids, params: [ctx.tenant.id, collection, ctx.agent.id, ctx.agent.label, ...columns, graphed, behalf?.id ?? null, behalf?.label ?? null] };
}

export async function createMemories(ctx: AuthedCtx, collection: string, items: NewMemory[]): Promise<Memory[]> {
  const embeddings = await ctx.app.embedder.embed(items.map((m) => m.text));
  return ctx.app.db.transaction((tx) => insertMemories(tx, ctx, collection, items, embeddings));
}

/**
 * A memory of this tenant in this collection, or 404 (other tenants' ids look the same as missing
 * ones). `forUpdate` locks its row until the transaction ends, for a change that depends on its state.
 */
export async function findMemory(q: Queryable, ctx: AuthedCtx, collection: string, id: string, forUpdate = false): Promise<MemoryRow> {
  const lock = forUpdate ? ' for update' : '';
  const row = isUuid(id)
    ? (
        await q.query<MemoryRow>(`select ${MEMORY_COLUMNS} from memories where tenant_id = $1 and id = $2 and collection = $3${lock}`, [
          ctx.tenant.id,
          id,
          collection,
        ])
      )[0]
    : undefined;
  if (!row) throw notFound(`Memory ${id} not found in collection "${collection}"`);
  return row;
}

/**
 * Whether this caller is shown memories held in quarantine (docs/trust.md): admin keys, which
 * review them; an agent key is served none, by id or in a list.
 */
export const seesHeld = (ctx: Pick<AuthedCtx, 'agent'>) => ctx.agent.role === 'admin';

/** findMemory for a call that hands the memory over or changes it: a held one is a 404 to an agent key, as a missing one. */
export async function findServable(q: Queryable, ctx: AuthedCtx, collection: string, id: string, forUpdate = false): Promise<MemoryRow> {
  const row = await findMemory(q, ctx, collection, id, forUpdate);
  if (row.held && !seesHeld(ctx)) throw notFound(`Memory ${id} not found in collection "${collection}"`);
  return row;
}

export async function listMemories(
  ctx: AuthedCtx,
  input: {
    collection: string;
    limit: number;
    offset: number;
    include_archived: boolean;
    category?: string;
    container_tag?: string;
    pinned?: boolean;
    archived?: boolean;
  },
): Promise<Memory[]> {
  await getCollection(ctx.app.db, ctx.tenant.id, input.collection);
  const rows = await ctx.app.db.query<MemoryRow>(
    `select ${MEMORY_COLUMNS} from memories
      where tenant_id = $1 and collection = $2
        and (case when $6::boolean is null then $3 or not archived else archived = $6 end)
        and ($7::text is null or category = $7) and ($8::text is null or container_tag = $8)
        and ($9::boolean is null or pinned = $9) and (not held or $10)
      order by pinned desc, created_at desc, id desc limit $4 offset $5`,
    [
      ctx.tenant.id,
      input.collection,
      input.include_archived,
      input.limit,
      input.offset,
      input.archived ?? null,
      input.category ?? null,
      input.container_tag ?? null,
      input.pinned ?? null,
      seesHeld(ctx),
    ],
  );
  handOver(
    ctx,
    rows.map((r) => r.id),
    false,
  );
  return rows.map(memoryView);
}

type Patch = Partial<Pick<MemoryCreate, 'text' | 'importance' | 'category' | 'metadata'>> & {
  pinned?: boolean;
  archived?: boolean;
};

/**
 * Changes only the supplied fields; a new text is re-embedded in the same request, screened as a
 * new memory's is, and the text it replaces is kept as a revision so the ledger still shows what
 * was handed over before (docs/trust.md). A person's memory whose text anyone else rewrites is no
 * longer a person's words: it takes the editor's class, so an agent cannot launder its text
 * through the class the default policy trusts.
 */
export async function updateMemory(ctx: AuthedCtx, collection: string, id: string, patch: Patch): Promise<Memory> {
  const embedding = patch.text !== undefined ? toVectorLiteral((await ctx.app.embedder.embed([patch.text]))[0]!) : null;
  const policy = patch.text !== undefined ? await trustPolicyOf(ctx.app, ctx.tenant.id) : null;
  return ctx.app.db.transaction(async (tx) => {
    // Locked, so that what it was (archived or not) is what this update changes.
    const before = await findServable(tx, ctx, collection, id, true);
    const editor = callerTrust(ctx);
    const trust = patch.text !== undefined && before.trust === 'user' && editor !== 'user' ? editor : before.trust;
    const rescreened = policy && patch.text !== before.text ? rescreen(before, screenText(patch.text!, trust, policy)) : null;
    if (patch.text !== undefined) await keepRevision(tx, ctx.tenant.id, id, patch.text);
    const [row] = await tx.query<MemoryRow>(
      `update memories set
         text = coalesce($4, text),
         embedding = coalesce($5::vector, embedding),
         importance = coalesce($6, importance),
         category = coalesce($7, category),
         metadata = coalesce($8::jsonb, metadata),
         pinned = coalesce($9, pinned),
         archived = coalesce($10, archived),
         held = coalesce($11, held),
         quarantine = case when $11::boolean is null then quarantine else $12::jsonb end,
         trust = $13,
         updated_at = now()
       where tenant_id = $1 and id = $2 and collection = $3
       returning ${MEMORY_COLUMNS}`,
      [
        ctx.tenant.id,
        id,
        collection,
        patch.text ?? null,
        embedding,
        patch.importance ?? null,
        patch.category ?? null,
        patch.metadata ?? null,
        patch.pinned ?? null,
        patch.archived ?? null,
        rescreened?.held ?? null,
        rescreened?.quarantine ?? null,
        trust,
      ],
    );
    await touchCollection(tx, ctx.tenant.id, collection, 0, Number(row!.archived) - Number(before.archived));
    const memory = memoryView(row!);
    await emitMemoryEvents(tx, ctx, 'memory.updated', collection, [memory]);
    if (row!.held && !before.held) await emitMemoryEvents(tx, ctx, 'memory.quarantined', collection, [memory]);
    return memory;
  });
}

/**
 * Keeps a memory's text as a revision before an edit replaces it with `text` (nothing when it is
 * the same), so that the ledger shows what was handed over before (docs/trust.md). The time is
 * sent, not taken from now(): Citus plans an insert from a select with a function call badly.
 */
export async function keepRevision(q: Queryable, tenantId: string, id: string, text: string): Promise<void> {
  await q.query(
    `insert into memory_revisions (tenant_id, memory_id, until, text)
     select tenant_id, id, $4::timestamptz, text from memories where tenant_id = $1 and id = $2 and text <> $3
     on conflict do nothing`,
    [tenantId, id, text, new Date().toISOString()],
  );
}

/**
 * A new text's screening against the memory's state: an edit that makes a memory steer agents
 * holds it; one that clears a held memory's text leaves it held until an admin releases it. Null:
 * nothing to change.
 */
function rescreen(before: MemoryRow, now: Screened): { held: boolean; quarantine: Quarantine | null } | null {
  if (before.held) return null;
  if (!now.quarantine) return before.quarantine?.state === 'flagged' ? { held: false, quarantine: null } : null;
  return { held: now.held, quarantine: now.quarantine };
}

/** A memory's new content from the source it was read from (a connector record seen again with a change). */
export interface Refresh {
  id: string;
  text: string;
  metadata: Record<string, unknown>;
  container_tag: string | null;
  embedding: number[];
}

/**
 * Rewrites memories in place with their source's new content, one statement each: each new text
 * is screened as a new memory's (a held memory stays held) and the text it replaces kept as a
 * revision (docs/trust.md).
 */
export async function refreshMemories(q: Queryable, ctx: AuthedCtx, items: Refresh[], trust: TrustClass): Promise<void> {
  if (!items.length) return;
  const policy = await trustPolicyOf(ctx.app, ctx.tenant.id, q);
  const updated = new Map<string, Memory[]>();
  const quarantined = new Map<string, Memory[]>();
  const add = (to: Map<string, Memory[]>, m: Memory) => to.set(m.collection, [...(to.get(m.collection) ?? []), m]);
  for (const item of items) {
    const screened = screenText(item.text, trust, policy);
    await keepRevision(q, ctx.tenant.id, item.id, item.text);
    const [before] = await q.query<{ held: boolean }>('select held from memories where tenant_id = $1 and id = $2 for update', [ctx.tenant.id, item.id]);
    if (!before) continue;
    const [row] = await q.query<MemoryRow>(
      `update memories set text = $3, metadata = $4::jsonb, container_tag = $5, embedding = $6::vector, updated_at = now(),
              held = held or $7,
              quarantine = case when held then quarantine when $8::jsonb is not null then $8::jsonb
                                when quarantine->>'state' = 'flagged' then null else quarantine end
        where tenant_id = $1 and id = $2 returning ${MEMORY_COLUMNS}`,
      [ctx.tenant.id, item.id, item.text, item.metadata, item.container_tag, toVectorLiteral(item.embedding), screened.held, screened.quarantine],
    );
    add(updated, memoryView(row!));
    if (row!.held && !before.held) add(quarantined, memoryView(row!));
  }
  // One statement a memory: the page's size counts (its creates were counted by insertMemories).
  await noteBulkWrite(q, ctx.app, items.length);
  for (const [collection, memories] of updated) {
    await touchCollection(q, ctx.tenant.id, collection, 0);
    await emitMemoryEvents(q, ctx, 'memory.updated', collection, memories);
  }
  for (const [collection, memories] of quarantined) await emitMemoryEvents(q, ctx, 'memory.quarantined', collection, memories);
}

export async function deleteMemory(ctx: AuthedCtx, collection: string, id: string): Promise<void> {
  await ctx.app.db.transaction(async (tx) => {
    await findServable(tx, ctx, collection, id);
    const deleted = await tx.query<FileRefs & { archived: boolean }>(
      'delete from memories where tenant_id = $1 and id = $2 returning images, metadata, archived',
      [ctx.tenant.id, id],
    );
    await enqueueFileCleanup(tx, ctx.app, ctx.tenant.id, deleted);
    await touchCollection(tx, ctx.tenant.id, collection, -1, -archivedAmong(deleted));
    await emitMemoryEvents(tx, ctx, 'memory.deleted', collection, [{ id }]);
  });
}

export async function moveMemory(ctx: AuthedCtx, collection: string, id: string, to: string): Promise<Memory> {
  if (to === collection) throw badRequest('The memory is already in that collection');
  return ctx.app.db.transaction(async (tx) => {
    await findServable(tx, ctx, collection, id);
    await ensureCollection(tx, ctx, to);
    const [row] = await tx.query<MemoryRow>(
      `update memories set collection = $3, updated_at = now() where tenant_id = $1 and id = $2 returning ${MEMORY_COLUMNS}`,
      [ctx.tenant.id, id, to],
    );
    // An archived memory moves as one: archived in the collection it goes to.
    const archived = archivedAmong([row!]);
    await touchCollection(tx, ctx.tenant.id, to, 1, archived);
    await touchCollection(tx, ctx.tenant.id, collection, -1, -archived);
    const memory = memoryView(row!);
    await emitMemoryEvents(tx, ctx, 'memory.updated', to, [memory]);
    return memory;
  });
}

import type { AuthedCtx } from '../../core/context.ts';
import { embedAll } from '../files/file-memories.ts';
import { insertMemories, refreshMemories, type NewMemory } from '../memory/memories.ts';
import { storable } from '../memory/storable.ts';
import type { ConnectionRow } from './connections.ts';
import type { ConnectorRecord } from './providers/connector.ts';

/** The memory text limit: a longer record keeps its beginning, and says so in its metadata. */
const MAX_TEXT = 10_000;

/** The largest of two cursors (one provider's cursors sort as strings). */
export const laterCursor = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a > b ? a : b);

const moment = (at: string) => (Number.isNaN(Date.parse(at)) ? undefined : new Date(at).toISOString());

function toMemory(conn: ConnectionRow, r: ConnectorRecord): NewMemory {
  const full = storable(r.text).trim();
  const text = storable(full.slice(0, MAX_TEXT)) || `(empty ${conn.provider} record ${storable(r.id)})`;
  return {
    text,
    importance: 0.5,
    category: 'connector',
    source: conn.provider,
    container_tag: conn.container_tag,
    // The record's own time at the provider is when it happened (docs/time.md).
    observed_at: moment(r.updated_at),
    metadata: {
      ...r.extra,
      provider: conn.provider,
      connection_id: conn.id,
      record_id: storable(r.id),
      url: r.url && storable(r.url),
      author: r.author && storable(r.author),
      updated_at: r.updated_at,
      ...(full.length > MAX_TEXT && { truncated: true }),
    },
  };
}

/**
 * Stores one page of a provider's records in the connection's collection: a record seen before
 * updates its memory in place (same id, new text and embedding), one unchanged since is skipped,
 * a new one becomes a memory. The page commits as a whole; events go out for what changed.
 * Answers how many memories changed and the page's largest cursor.
 */
export async function storeRecords(ctx: AuthedCtx, conn: ConnectionRow, records: ConnectorRecord[]) {
  const latest = new Map<string, ConnectorRecord>();
  for (const r of records) if ((latest.get(r.id)?.cursor ?? '') <= r.cursor) latest.set(r.id, r);
  const page = [...latest.values()];
  const cursor = page.reduce<string | null>((c, r) => laterCursor(c, r.cursor), null);
  const known = new Map(
    (
      await ctx.app.db.query<{ record_id: string; memory_id: string; text: string; updated_at: string | null }>(
        `select r.record_id, r.memory_id, m.text, m.metadata->>'updated_at' as updated_at
           from connection_records r join memories m on m.tenant_id = r.tenant_id and m.id = r.memory_id
          where r.tenant_id = $1 and r.connection_id = $2 and r.record_id = any($3::text[])`,
        [conn.tenant_id, conn.id, page.map((r) => storable(r.id))],
      )
    ).map((k) => [k.record_id, k]),
  );
  const changed = page
    .map((r) => ({ record: r, memory: toMemory(conn, r), known: known.get(storable(r.id)) }))
    .filter((c) => !c.known || c.known.text !== c.memory.text || c.known.updated_at !== c.record.updated_at);
  if (!changed.length) return { changed: 0, cursor };
  const embeddings = await embedAll(
    ctx,
    changed.map((c) => c.memory.text),
  );
  const fresh = changed.flatMap((c, i) => (c.known ? [] : [{ ...c, embedding: embeddings[i]! }]));
  const seen = changed.flatMap((c, i) => (c.known ? [{ ...c, memoryId: c.known.memory_id, embedding: embeddings[i]! }] : []));
  await ctx.app.db.transaction(async (tx) => {
    const created = await insertMemories(
      tx,
      ctx,
      conn.collection,
      fresh.map((c) => c.memory),
      fresh.map((c) => c.embedding),
      { trust: 'connector' },
    );
    if (created.length) {
      await tx.query('insert into connection_records (tenant_id, connection_id, record_id, memory_id) select $1, $2, unnest($3::text[]), unnest($4::uuid[])', [
        conn.tenant_id,
        conn.id,
        fresh.map((c) => c.memory.metadata.record_id),
        created.map((m) => m.id),
      ]);
    }
    // A memory moved to another collection since is updated where it now is.
    await refreshMemories(
      tx,
      ctx,
      seen.map((c) => ({ id: c.memoryId, text: c.memory.text, metadata: c.memory.metadata, container_tag: c.memory.container_tag, embedding: c.embedding })),
      'connector',
    );
  });
  return { changed: changed.length, cursor };
}

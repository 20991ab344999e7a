import type { AuthedCtx } from '../../core/context.ts';
import { decodeCursor, encodeCursor } from '../../core/cursor.ts';
import { iso, isUuid } from '../../core/ids.ts';
import type { MemoryUse } from '../../schemas/memory.ts';
import type { LedgerEntry, TrustClass } from '../../schemas/trust.ts';

/** What a ledger read asks (docs/trust.md, "The influence ledger"): every field narrows. */
export interface LedgerQuery {
  agent_id?: string;
  session_id?: string;
  memory_id?: string;
  from?: string;
  to?: string;
  limit: number;
  /** The `next` of the page before. */
  cursor?: string;
}

interface EntryRow {
  id: string;
  at: Date;
  agent_id: string | null;
  agent_label: string;
  via: LedgerEntry['via'];
  procedure: string;
  request_id: string;
  session_id: string | null;
  memory_ids: string[];
}

interface MemoryNow {
  id: string;
  collection: string;
  text: string;
  trust: TrustClass;
  held: boolean;
  archived: boolean;
  superseded_by: string | null;
  retracted: boolean;
  expired: boolean;
}

/**
 * The ledger's entries, newest first, with each memory as it was handed over: its text then (an
 * edit since is read back from its revisions) and what it is now, so that a memory since
 * superseded, retracted, held or deleted is still named. `dropped`: entries this tenant lost.
 */
export async function ledgerEntries(ctx: AuthedCtx, q: LedgerQuery) {
  const params: unknown[] = [ctx.tenant.id];
  const p = (v: unknown) => `$${params.push(v)}`;
  const conds = ['tenant_id = $1'];
  // An id that is no uuid names nobody: an empty page, not a database error.
  const uuidOrNone = (v: string) => (isUuid(v) ? v : '00000000-0000-0000-0000-000000000000');
  if (q.agent_id !== undefined) conds.push(`agent_id = ${p(uuidOrNone(q.agent_id))}::uuid`);
  if (q.session_id !== undefined) conds.push(`session_id = ${p(q.session_id)}`);
  if (q.memory_id !== undefined) conds.push(`memory_ids @> array[${p(uuidOrNone(q.memory_id))}::uuid]`);
  if (q.from !== undefined) conds.push(`at >= ${p(q.from)}::timestamptz`);
  if (q.to !== undefined) conds.push(`at < ${p(q.to)}::timestamptz`);
  if (q.cursor !== undefined) {
    const [at, id] = decodeCursor(q.cursor);
    conds.push(`(at, id) < (${p(at)}::timestamptz, ${p(id)}::uuid)`);
  }
  const rows = await ctx.app.db.query<EntryRow>(
    `select id, at, agent_id, agent_label, via, procedure, request_id, session_id, memory_ids::text[] as memory_ids
       from memory_ledger where ${conds.join(' and ')} order by at desc, id desc limit ${p(q.limit + 1)}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const texts = await textsThen(ctx, page);
  const [gap] = await ctx.app.db.query<{ dropped: string; last_dropped_at: Date }>(
    'select dropped::text as dropped, last_dropped_at from memory_ledger_gaps where tenant_id = $1',
    [ctx.tenant.id],
  );
  return {
    entries: page.map((r): LedgerEntry => ({
      id: r.id,
      at: iso(r.at)!,
      agent: { id: r.agent_id, label: r.agent_label },
      via: r.via,
      procedure: r.procedure,
      request_id: r.request_id,
      session_id: r.session_id,
      memories: r.memory_ids.map((id) => texts(id, r.at)),
    })),
    next: rows.length > q.limit ? encodeCursor(page[page.length - 1]!.at, page[page.length - 1]!.id) : null,
    dropped: Number(gap?.dropped ?? 0),
    last_dropped_at: iso(gap?.last_dropped_at),
  };
}

/** Each memory of the entries as it was handed over at a moment: two statements for the whole page. */
async function textsThen(ctx: AuthedCtx, entries: EntryRow[]) {
  const ids = [...new Set(entries.flatMap((e) => e.memory_ids))];
  const memories = ids.length
    ? await ctx.app.db.query<MemoryNow>(
        `select id, collection, text, trust, held, archived, superseded_by, retraction is not null as retracted,
                (valid_to is not null and valid_to <= now()) as expired
           from memories where tenant_id = $1 and id = any($2::uuid[])`,
        [ctx.tenant.id, ids],
      )
    : [];
  const revisions = ids.length
    ? await ctx.app.db.query<{ memory_id: string; until: Date; text: string }>(
        'select memory_id, until, text from memory_revisions where tenant_id = $1 and memory_id = any($2::uuid[]) order by until',
        [ctx.tenant.id, ids],
      )
    : [];
  const byId = new Map(memories.map((m) => [m.id, m]));
  return (id: string, at: Date): LedgerEntry['memories'][number] => {
    const m = byId.get(id);
    if (!m) return { id, collection: null, text: null, now: 'deleted', trust: null };
    // The text that held at `at`: the first revision replaced after it, or the text of today.
    const then = revisions.find((r) => r.memory_id === id && r.until > at)?.text ?? m.text;
    const now = m.held ? 'held' : m.retracted ? 'retracted' : m.superseded_by ? 'superseded' : m.expired ? 'expired' : m.archived ? 'archived' : 'current';
    return { id, collection: m.collection, text: then, now, trust: m.trust };
  };
}

/**
 * Which agents were handed one memory, and when (incident response after a wrong or poisoned
 * memory): per identity, how often, first and last, and through which front ends.
 */
export async function memoryRecipients(ctx: AuthedCtx, memoryId: string) {
  const rows = await ctx.app.db.query<{ agent_id: string | null; agent_label: string; times: number; first_at: Date; last_at: Date; via: string[] }>(
    `select agent_id, max(agent_label) as agent_label, count(*)::int as times, min(at) as first_at, max(at) as last_at,
            array_agg(distinct via order by via) as via
       from memory_ledger where tenant_id = $1 and memory_ids @> array[$2::uuid]
      group by agent_id order by max(at) desc`,
    [ctx.tenant.id, memoryId],
  );
  return rows.map((r) => ({
    agent: { id: r.agent_id, label: r.agent_label },
    times: r.times,
    first_at: iso(r.first_at)!,
    last_at: iso(r.last_at)!,
    via: r.via as LedgerEntry['via'][],
  }));
}

/** A memory's use as written so far: 0 and null without a row (never recalled nor confirmed). */
export async function memoryUseOf(ctx: AuthedCtx, memoryId: string): Promise<MemoryUse> {
  const [row] = await ctx.app.db.query<{ recalls: number; last_recalled_at: Date | null; confirmations: number; last_confirmed_at: Date | null }>(
    `select recalls::int as recalls, last_recalled_at, confirmations, last_confirmed_at
       from memory_use where tenant_id = $1 and memory_id = $2`,
    [ctx.tenant.id, memoryId],
  );
  return {
    recalls: row?.recalls ?? 0,
    last_recalled_at: iso(row?.last_recalled_at),
    confirmations: row?.confirmations ?? 0,
    last_confirmed_at: iso(row?.last_confirmed_at),
  };
}

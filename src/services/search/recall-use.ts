import type { App, AuthedCtx } from '../../core/context.ts';
import { iso } from '../../core/ids.ts';
import type { Db } from '../../ports/db/db.ts';
import type { MemoryUse } from '../../schemas/memory.ts';

/**
 * How often each memory was recalled (handed to a caller by search or the context endpoint) and
 * when last, in `memory_use` (docs/search.md, "Recall counts"). A search writes nothing: the
 * recalls are added up in this process, per database and memory, and written by one upsert per
 * database every FLUSH_MS and when the App closes.
 */
const FLUSH_MS = 5000;
/** A database whose writes failed this many flushes in a row (a minute) loses its counts: its pool may be gone for good. */
const MAX_FAILURES = 12;
/** Memories waiting to be written, over every database; past it recalls are not counted until a flush, so memory stays bounded. */
const MAX_PENDING = 100_000;

interface Use {
  tenantId: string;
  memoryId: string;
  recalls: number;
  /** Epoch ms of the latest recall counted. */
  last: number;
}
interface Pending {
  uses: Map<string, Use>;
  failures: number;
}
interface Counter {
  /** Per data database: the platform's, or a tenant's own (an App view's `db`). */
  byDb: Map<Db, Pending>;
  size: number;
  timer?: NodeJS.Timeout;
  flushing?: Promise<void>;
  app: App;
}

// Per running service (tests start several in one process): keyed by its platform database,
// which every tenant's App view shares with it.
const counters = new WeakMap<Db, Counter>();

function counterOf(app: App): Counter {
  let counter = counters.get(app.platform);
  if (!counter) {
    counter = { byDb: new Map(), size: 0, app };
    counters.set(app.platform, counter);
  }
  return counter;
}

/** Counts one recall of each memory handed to the caller, in the database that holds them; written later. */
export function countRecalls(ctx: AuthedCtx, memoryIds: string[]): void {
  if (!memoryIds.length) return;
  const counter = counterOf(ctx.app);
  let pending = counter.byDb.get(ctx.app.db);
  if (!pending) {
    pending = { uses: new Map(), failures: 0 };
    counter.byDb.set(ctx.app.db, pending);
  }
  const now = Date.now();
  for (const memoryId of new Set(memoryIds)) {
    const key = `${ctx.tenant.id}:${memoryId}`;
    const use = pending.uses.get(key);
    if (use) {
      use.recalls++;
      use.last = now;
    } else if (counter.size < MAX_PENDING) {
      pending.uses.set(key, { tenantId: ctx.tenant.id, memoryId, recalls: 1, last: now });
      counter.size++;
    }
  }
}

/**
 * Writes the counts added up so far, one statement per database (rows in key order, so that two
 * processes flushing at once lock them in the same order). Memories deleted meanwhile are left
 * out. A database whose write fails keeps its counts for the next flush, and the failure is logged.
 */
export async function flushRecalls(app: App): Promise<void> {
  const counter = counters.get(app.platform);
  if (!counter) return;
  // One flush at a time: a timer firing during the close's flush waits for it.
  while (counter.flushing) await counter.flushing;
  counter.flushing = writeAll(counter).finally(() => (counter.flushing = undefined));
  await counter.flushing;
}

async function writeAll(counter: Counter): Promise<void> {
  const taken = [...counter.byDb.entries()].filter(([, p]) => p.uses.size);
  for (const [db, pending] of taken) {
    counter.byDb.set(db, { uses: new Map(), failures: pending.failures });
    counter.size -= pending.uses.size;
  }
  await Promise.all(
    taken.map(async ([db, pending]) => {
      try {
        await write(db, [...pending.uses.values()]);
        const now = counter.byDb.get(db);
        if (now) now.failures = 0;
      } catch (err) {
        const failures = pending.failures + 1;
        if (failures >= MAX_FAILURES) {
          counter.app.log.error({ err, memories: pending.uses.size }, 'recall counts dropped: their database refused them %d times in a row', failures);
          return;
        }
        counter.app.log.warn({ err, memories: pending.uses.size }, 'recall counts not written; retried at the next flush');
        restore(counter, db, pending, failures);
      }
    }),
  );
}

/** Puts counts that were not written back, added to those counted since. */
function restore(counter: Counter, db: Db, pending: Pending, failures: number) {
  const current = counter.byDb.get(db) ?? { uses: new Map<string, Use>(), failures };
  current.failures = failures;
  for (const [key, use] of pending.uses) {
    const later = current.uses.get(key);
    if (later) {
      later.recalls += use.recalls;
      later.last = Math.max(later.last, use.last);
    } else {
      current.uses.set(key, use);
      counter.size++;
    }
  }
  counter.byDb.set(db, current);
}

async function write(db: Db, uses: Use[]): Promise<void> {
  uses.sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.memoryId.localeCompare(b.memoryId));
  // The memory's own tenant and id go in, so a Citus coordinator runs it on each shard (the
  // tables are co-located by tenant).
  await db.query(
    `insert into memory_use (tenant_id, memory_id, recalls, last_recalled_at)
     select m.tenant_id, m.id, u.recalls, u.at
       from unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::timestamptz[]) as u(tenant_id, memory_id, recalls, at)
       join memories m on m.tenant_id = u.tenant_id and m.id = u.memory_id
      order by 1, 2
     on conflict (tenant_id, memory_id) do update
       set recalls = memory_use.recalls + excluded.recalls,
           last_recalled_at = greatest(memory_use.last_recalled_at, excluded.last_recalled_at)`,
    [uses.map((u) => u.tenantId), uses.map((u) => u.memoryId), uses.map((u) => u.recalls), uses.map((u) => new Date(u.last).toISOString())],
  );
}

/** Starts writing the counts every FLUSH_MS (at the App's open); the timer never keeps the process alive. */
export function startRecallCounts(app: App): void {
  const counter = counterOf(app);
  counter.timer ??= setInterval(() => void flushRecalls(app), FLUSH_MS).unref();
}

/** Stops the timer and writes what is left (at the App's close, before its databases close). */
export async function stopRecallCounts(app: App): Promise<void> {
  const counter = counters.get(app.platform);
  if (!counter) return;
  clearInterval(counter.timer);
  counter.timer = undefined;
  await flushRecalls(app);
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

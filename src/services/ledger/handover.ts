import type { App, AuthedCtx } from '../../core/context.ts';
import { newId } from '../../core/ids.ts';
import type { Db, Queryable } from '../../ports/db/db.ts';

/**
 * What was handed to whom (docs/trust.md, "The influence ledger"): each time search, the context
 * endpoint (and through it the proxies, hooks and MCP's recall prompt) or a single-memory read
 * hands memories to a caller, one ledger entry names them with the caller's identity, front end,
 * request and session, and each memory's recall count goes up (docs/search.md, "Recall counts").
 * Nothing is written on the request's path: entries and counts are added up in this process, per
 * database, and written by one statement each every FLUSH_MS and when the App closes.
 */
const FLUSH_MS = 1000;
/** A database whose writes failed this many flushes in a row (a minute) loses what waits for it: its pool may be gone for good. */
const MAX_FAILURES = 60;
/** Ledger entries waiting, over every database; past it an entry is dropped and counted as a gap of its tenant. */
const MAX_ENTRIES = 50_000;
/** Memories whose recall counts wait, over every database; past it recalls are not counted until a flush. */
const MAX_USES = 100_000;

interface Use {
  tenantId: string;
  memoryId: string;
  recalls: number;
  /** Epoch ms of the latest recall counted. */
  last: number;
}
interface Entry {
  tenantId: string;
  id: string;
  at: number;
  agentId: string | null;
  agentLabel: string;
  via: string;
  procedure: string;
  requestId: string;
  session: string | null;
  memoryIds: string[];
}
interface Pending {
  uses: Map<string, Use>;
  entries: Entry[];
  /** Entries dropped per tenant, not yet written to memory_ledger_gaps. */
  drops: Map<string, number>;
  failures: number;
}
interface Recorder {
  /** Per data database: the platform's, or a tenant's own (an App view's `db`). */
  byDb: Map<Db, Pending>;
  uses: number;
  entries: number;
  timer?: NodeJS.Timeout;
  flushing?: Promise<void>;
  app: App;
}

// Per running service (tests start several in one process): keyed by its platform database,
// which every tenant's App view shares with it.
const recorders = new WeakMap<Db, Recorder>();

function recorderOf(app: App): Recorder {
  let recorder = recorders.get(app.platform);
  if (!recorder) {
    recorder = { byDb: new Map(), uses: 0, entries: 0, app };
    recorders.set(app.platform, recorder);
  }
  return recorder;
}

const emptyPending = (failures = 0): Pending => ({ uses: new Map(), entries: [], drops: new Map(), failures });

function pendingOf(recorder: Recorder, db: Db): Pending {
  let pending = recorder.byDb.get(db);
  if (!pending) {
    pending = emptyPending();
    recorder.byDb.set(db, pending);
  }
  return pending;
}

/**
 * Records that these memories were handed to the caller: a ledger entry when the call came
 * through a front end and the ledger is on (ORGMEM_LEDGER_DAYS), and, for a recall (search and
 * the context endpoint, not a read by id or a list), one recall each. Written later.
 */
export function handOver(ctx: AuthedCtx, memoryIds: string[], recall = true): void {
  if (!memoryIds.length) return;
  const recorder = recorderOf(ctx.app);
  const pending = pendingOf(recorder, ctx.app.db);
  const now = Date.now();
  const ids = [...new Set(memoryIds)];
  if (ctx.call && ctx.app.config.ledgerDays > 0) {
    if (recorder.entries < MAX_ENTRIES) {
      pending.entries.push({
        tenantId: ctx.tenant.id,
        id: newId(),
        at: now,
        agentId: ctx.agent.id || null,
        agentLabel: ctx.agent.label,
        via: ctx.call.via,
        procedure: ctx.call.procedure,
        requestId: ctx.requestId,
        session: ctx.call.session,
        memoryIds: ids,
      });
      recorder.entries++;
    } else {
      pending.drops.set(ctx.tenant.id, (pending.drops.get(ctx.tenant.id) ?? 0) + 1);
    }
  }
  if (!recall) return;
  for (const memoryId of ids) {
    const key = `${ctx.tenant.id}:${memoryId}`;
    const use = pending.uses.get(key);
    if (use) {
      use.recalls++;
      use.last = now;
    } else if (recorder.uses < MAX_USES) {
      pending.uses.set(key, { tenantId: ctx.tenant.id, memoryId, recalls: 1, last: now });
      recorder.uses++;
    }
  }
}

/**
 * Writes what was recorded so far, database by database. A database whose write fails keeps it
 * for the next flush, and the failure is logged; after MAX_FAILURES its entries are dropped and
 * counted as its tenants' gaps, which are kept until they can be written.
 */
export async function flushHandovers(app: App): Promise<void> {
  const recorder = recorders.get(app.platform);
  if (!recorder) return;
  // One flush at a time: a timer firing during the close's flush waits for it.
  while (recorder.flushing) await recorder.flushing;
  recorder.flushing = writeAll(recorder).finally(() => (recorder.flushing = undefined));
  await recorder.flushing;
}

async function writeAll(recorder: Recorder): Promise<void> {
  const taken = [...recorder.byDb.entries()].filter(([, p]) => p.uses.size || p.entries.length || p.drops.size);
  for (const [db, pending] of taken) {
    recorder.byDb.set(db, emptyPending(pending.failures));
    recorder.uses -= pending.uses.size;
    recorder.entries -= pending.entries.length;
  }
  await Promise.all(
    taken.map(async ([db, pending]) => {
      try {
        await write(db, pending);
        pendingOf(recorder, db).failures = 0;
      } catch (err) {
        const failures = pending.failures + 1;
        const waiting = { memories: pending.uses.size, entries: pending.entries.length };
        if (failures >= MAX_FAILURES) {
          recorder.app.log.error({ err, ...waiting }, 'ledger entries and recall counts dropped: their database refused them %d times in a row', failures);
          for (const e of pending.entries) pending.drops.set(e.tenantId, (pending.drops.get(e.tenantId) ?? 0) + 1);
          restore(recorder, db, { ...emptyPending(failures), drops: pending.drops });
          return;
        }
        recorder.app.log.warn({ err, ...waiting }, 'ledger entries and recall counts not written; retried at the next flush');
        restore(recorder, db, { ...pending, failures });
      }
    }),
  );
}

/** Puts back what was not written, added to what was recorded since. */
function restore(recorder: Recorder, db: Db, pending: Pending) {
  const current = pendingOf(recorder, db);
  current.failures = pending.failures;
  for (const [key, use] of pending.uses) {
    const later = current.uses.get(key);
    if (later) {
      later.recalls += use.recalls;
      later.last = Math.max(later.last, use.last);
    } else {
      current.uses.set(key, use);
      recorder.uses++;
    }
  }
  current.entries.unshift(...pending.entries);
  recorder.entries += pending.entries.length;
  for (const [tenant, n] of pending.drops) current.drops.set(tenant, (current.drops.get(tenant) ?? 0) + n);
}

const iso = (ms: number) => new Date(ms).toISOString();

/** All of a database's waiting records in one transaction: a retry after a failure never counts a recall twice. */
async function write(db: Db, pending: Pending): Promise<void> {
  await db.transaction((tx) => writeIn(tx, pending));
}

async function writeIn(db: Queryable, pending: Pending): Promise<void> {
  const entries = pending.entries;
  if (entries.length) {
    // Each entry's ids go as one array literal: a ragged list of lists has no array type.
    await db.query(
      `insert into memory_ledger (tenant_id, id, at, agent_id, agent_label, via, procedure, request_id, session_id, memory_ids)
       select e.tenant_id, e.id, e.at, e.agent_id, e.agent_label, e.via, e.procedure, e.request_id, e.session_id, e.memory_ids::uuid[]
         from unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
              as e(tenant_id, id, at, agent_id, agent_label, via, procedure, request_id, session_id, memory_ids)
       on conflict do nothing`,
      [
        entries.map((e) => e.tenantId),
        entries.map((e) => e.id),
        entries.map((e) => iso(e.at)),
        entries.map((e) => e.agentId),
        entries.map((e) => e.agentLabel),
        entries.map((e) => e.via),
        entries.map((e) => e.procedure),
        entries.map((e) => e.requestId),
        entries.map((e) => e.session),
        entries.map((e) => `{${e.memoryIds.join(',')}}`),
      ],
    );
  }
  const uses = [...pending.uses.values()];
  if (uses.length) {
    uses.sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.memoryId.localeCompare(b.memoryId));
    // Rows in key order, so that two processes flushing at once lock them in the same order; the
    // memory's own tenant and id go in, so a Citus coordinator runs it on each shard (the tables
    // are co-located by tenant). Memories deleted meanwhile are left out.
    await db.query(
      `insert into memory_use (tenant_id, memory_id, recalls, last_recalled_at)
       select m.tenant_id, m.id, u.recalls, u.at
         from unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::timestamptz[]) as u(tenant_id, memory_id, recalls, at)
         join memories m on m.tenant_id = u.tenant_id and m.id = u.memory_id
        order by 1, 2
       on conflict (tenant_id, memory_id) do update
         set recalls = memory_use.recalls + excluded.recalls,
             last_recalled_at = greatest(memory_use.last_recalled_at, excluded.last_recalled_at)`,
      [uses.map((u) => u.tenantId), uses.map((u) => u.memoryId), uses.map((u) => u.recalls), uses.map((u) => iso(u.last))],
    );
  }
  const drops = [...pending.drops].sort(([a], [b]) => a.localeCompare(b));
  if (drops.length) {
    await db.query(
      `insert into memory_ledger_gaps (tenant_id, dropped, last_dropped_at)
       select * from unnest($1::uuid[], $2::bigint[], $3::timestamptz[])
       on conflict (tenant_id) do update
         set dropped = memory_ledger_gaps.dropped + excluded.dropped, last_dropped_at = excluded.last_dropped_at`,
      [drops.map(([t]) => t), drops.map(([, n]) => n), drops.map(() => new Date().toISOString())],
    );
  }
}

/** Starts writing every FLUSH_MS (at the App's open); the timer never keeps the process alive. */
export function startHandovers(app: App): void {
  const recorder = recorderOf(app);
  recorder.timer ??= setInterval(() => void flushHandovers(app), FLUSH_MS).unref();
}

/** Stops the timer and writes what is left (at the App's close, before its databases close). */
export async function stopHandovers(app: App): Promise<void> {
  const recorder = recorders.get(app.platform);
  if (!recorder) return;
  clearInterval(recorder.timer);
  recorder.timer = undefined;
  await flushHandovers(app);
}

import { z } from 'zod';
import type { App } from '../../core/context.ts';
import { endStep, type Db, type Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';

/*
 * Which tenants the vector graph holds (sql/039, docs/search.md "Which tenants the graph holds").
 * A tenant's searches read its memories exactly until it holds ORGMEM_GRAPH_FROM of them (the
 * read is then a few tens of milliseconds, exact-cost.ts), so its rows in the shared graph were
 * only a cost: each insert's graph walk, and other tenants' walks stepping over them. Its
 * memories are written with `graphed` false, outside the partial index, until the fill job
 * marks the tenant and adds them; its searches use the graph once the fill is done.
 *
 * The race: an insert that read "not graphed" and commits after the fill went past its rows
 * would leave them outside the graph for good. Every insert takes the tenant's graph lock shared
 * before it reads the state and holds it to commit; the fill marks the tenant under the lock
 * taken exclusively, so it waits for those inserts to commit (the fill then sees their rows) and
 * every later insert reads the mark. The lock is an advisory one of the connection's own server,
 * the coordinator on Citus, where every write arrives.
 */

// Its lane: a fill queued again while one runs (a job's key is given up when it is taken) waits
// for it instead of holding a second worker over the same rows.
export const graphFillJob = defineJob('graph_fill', z.object({ tenant_id: z.uuid() }), { maxAttempts: 5, lane: 'graph' });

const lockKey = (param: string) => `hashtextextended('orgmem graph ' || ${param}::text, 0)`;
/**
 * Rows a fill statement marks: one short transaction each, each row an HNSW insert (about 0.6 ms
 * on PostgreSQL). PGlite runs a statement on the service's own thread, so a step holds its
 * event loop: on halfvec, 2,000 rows took 22 to 24 s there (12 ms a row; the binary graph's 1.3),
 * longer than the HTTP server's keep-alive timeout (5 s), so a client's next request on a kept
 * connection was reset when the loop came back. PGlite also runs one statement at a time, so each
 * statement of a search made during a fill waits for the step before it. On halfvec at 10k, a
 * search during the fill took 9 to 21 s with steps of 200 rows, 2.5 s (p50) with 50, and 0.53 s
 * (0.92 at most) with 10, the fill sharing the thread with the searches (bench/README.md, embedded).
 */
const FILL_ROWS: Record<Db['kind'], number> = { postgres: 2000, pglite: 10 };

/**
 * Every insert of memories calls this in its transaction before writing them: whether the rows
 * go into the graph. Queues the fill when the tenant reaches ORGMEM_GRAPH_FROM with them, and
 * again when a fill failed (its error is kept, so a write retries it).
 */
export async function graphedInsert(q: Queryable, app: App, tenantId: string, rows: number): Promise<boolean> {
  // In one flight: the state is read by the statement after the lock's, so after it is held.
  const [, [state]] = await Promise.all([
    q.query(`select pg_advisory_xact_lock_shared(${lockKey('$1')})::text`, [tenantId]),
    q.query<{ marked: boolean; failed: boolean; held: number }>(
      `select exists (select 1 from graph_tenants where tenant_id = $1) as marked,
              exists (select 1 from graph_tenants where tenant_id = $1 and error is not null) as failed,
              (select coalesce(sum(memory_count), 0) from collections where tenant_id = $1)::float8 as held`,
      [tenantId],
    ),
  ]);
  if ((!state!.marked && state!.held + rows >= app.config.search.graphFrom) || state!.failed) {
    await app.jobs.enqueue(q, graphFillJob, { tenant_id: tenantId }, { key: `graph_fill:${tenantId}` });
  }
  return state!.marked;
}

/**
 * The job: marks the tenant (new memories are graphed from then on), adds its older memories to
 * the graph in short steps, then makes it ready for graph searches. Resumable: a retry marks
 * only what is left. Answers the memories added.
 */
export async function fillGraph(app: App, tenantId: string): Promise<number> {
  // A deleted tenant's job has nothing to fill (its rows went with it).
  if (!(await app.platform.query('select 1 from tenants where id = $1', [tenantId])).length) return 0;
  await app.db.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(${lockKey('$1')})::text`, [tenantId]);
    await tx.query(`insert into graph_tenants (tenant_id, state) values ($1, 'filling') on conflict (tenant_id) do nothing`, [tenantId]);
  });
  try {
    const filled = await markRows(app.db, tenantId, true, (statement, params) => app.db.query(statement, params));
    await app.db.query(`update graph_tenants set state = 'ready', error = null, updated_at = now() where tenant_id = $1`, [tenantId]);
    app.log.info({ tenant_id: tenantId, filled }, 'tenant added to the vector graph');
    return filled;
  } catch (err) {
    await recordFillFailure(app, tenantId, err instanceof Error ? err.message : String(err));
    throw err;
  }
}

/** A failed or abandoned fill, kept for the tenant's pipeline health until a fill succeeds. */
export async function recordFillFailure(app: App, tenantId: string, reason: string): Promise<void> {
  await app.db.query(`update graph_tenants set error = $2, updated_at = now() where tenant_id = $1`, [tenantId, reason]);
}

type Step = { n: number; last: string | null };

/**
 * Sets `graphed` to `to` on the tenant's rows that differ, in steps of FILL_ROWS in id order from
 * the last one changed (the primary key's order, so no step reads a row twice); `run` runs each
 * step's statement, and a step changes nothing unless `guard` (SQL, the tenant as $1) holds.
 * Answers the rows changed.
 */
async function markRows(db: Db, tenantId: string, to: boolean, run: (statement: string, params: unknown[]) => Promise<Step[]>, guard = 'true') {
  let changed = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const started = performance.now();
    const [step] = await run(
      `with changed as (
         update memories m set graphed = ${to}
           from (select id from memories where tenant_id = $1 and id > $2 and graphed <> ${to} and ${guard} order by id limit $3) b
          where m.tenant_id = $1 and m.id = b.id
         returning m.id)
       select count(*)::int as n, max(id::text) as last from changed`,
      [tenantId, after, FILL_ROWS[db.kind]],
    );
    if (!step!.n) return changed;
    changed += step!.n;
    after = step!.last!;
    await endStep(db, started);
  }
}

export interface GraphPlace {
  tenantId: string;
  memories: number;
}

/**
 * The tenants whose place in the graph is not the one ORGMEM_GRAPH_FROM (`graphFrom`) gives
 * them: `leave`, in it (ready) while holding fewer memories, or out of it with rows still
 * graphed (a leave that stopped part way); `enter`, out of it while holding as many or more
 * (they would enter at their next write). A tenant whose fill has not finished is in neither.
 */
export async function misplacedTenants(db: Queryable, graphFrom: number): Promise<{ leave: GraphPlace[]; enter: GraphPlace[] }> {
  const rows = await db.query<{ tenant_id: string; memories: number; state: string | null; left_over: boolean }>(
    `select h.tenant_id, h.memories, g.state,
            -- read for the small tenants out of the graph only: those a stopped leave may have left rows of
            g.tenant_id is null and h.memories < $1 and exists (select 1 from memories m where m.tenant_id = h.tenant_id and m.graphed) as left_over
       from (select tenant_id, sum(memory_count)::float8 as memories from collections group by tenant_id) h
       left join graph_tenants g on g.tenant_id = h.tenant_id
      order by h.tenant_id`,
    [graphFrom],
  );
  const place = (r: (typeof rows)[number]): GraphPlace => ({ tenantId: r.tenant_id, memories: r.memories });
  return {
    leave: rows.filter((r) => r.memories < graphFrom && (r.state === 'ready' || r.left_over)).map(place),
    enter: rows.filter((r) => r.memories >= graphFrom && r.state === null).map(place),
  };
}

/**
 * Takes a tenant holding fewer than `graphFrom` memories out of the graph, as if it had never
 * reached it: unmarked under its graph lock taken exclusively (so no write is between reading
 * the mark and committing), its searches read exactly and its writes stay outside the graph from
 * then on; then its rows leave the graph in steps. A step holds the lock shared and changes
 * nothing once a fill has marked the tenant again, which waits for the step: the fill then sees
 * the rows the step took out. Answers the rows taken out, or null when the tenant stays (it holds
 * `graphFrom` or more now, or its fill has not finished).
 */
export async function leaveGraph(db: Db, tenantId: string, graphFrom: number): Promise<number | null> {
  const left = await db.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(${lockKey('$1')})::text`, [tenantId]);
    const [row] = await tx.query<{ held: number; state: string | null }>(
      `select (select coalesce(sum(memory_count), 0) from collections where tenant_id = $1)::float8 as held,
              (select state from graph_tenants where tenant_id = $1) as state`,
      [tenantId],
    );
    if (row!.held >= graphFrom || row!.state === 'filling') return false;
    await tx.query(`delete from graph_tenants where tenant_id = $1`, [tenantId]);
    return true;
  });
  if (!left) return null;
  return markRows(
    db,
    tenantId,
    false,
    (statement, params) =>
      db.transaction(async (tx) => {
        await tx.query(`select pg_advisory_xact_lock_shared(${lockKey('$1')})::text`, [tenantId]);
        return tx.query<Step>(statement, params);
      }),
    'not exists (select 1 from graph_tenants where tenant_id = $1)',
  );
}

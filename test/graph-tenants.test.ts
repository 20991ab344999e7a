import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/ports/db/db.ts';
import { fillGraph, graphedInsert, leaveGraph, misplacedTenants, recordFillFailure } from '../src/services/memory/graph-tenants.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * Which tenants the vector graph holds (services/memory/graph-tenants.ts): a tenant's memories
 * stay outside the partial index until it holds ORGMEM_GRAPH_FROM of them, its searches read
 * exactly until the fill is done, and no insert racing the fill leaves a row outside. The worker
 * is off: the tests run the fill themselves.
 */
const onPostgres = !!process.env.TEST_DATABASE_URL;
const FROM = 30;
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ ORGMEM_EMBEDDER: 'hash', ORGMEM_GRAPH_FROM: String(FROM) }, { worker: false });
});
afterAll(() => server?.close());

const notes = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ text: `${tag} note ${i} about the harbour ferry timetable` }));

async function add(t: Tenant, items: Array<{ text: string }>) {
  const res = await t.api('POST', '/v1/memory/collections/main/memories/bulk', items);
  expect(res.status).toBe(201);
  return res.body.ids as string[];
}

const rows = async (t: Tenant) =>
  (
    await server.app.db.query<{ graphed: boolean; n: number }>(
      'select graphed, count(*)::int as n from memories where tenant_id = $1 group by graphed order by graphed',
      [t.id],
    )
  ).map((r) => [r.graphed, r.n]);

const state = async (t: Tenant) =>
  (await server.app.db.query<{ state: string; error: string | null }>('select state, error from graph_tenants where tenant_id = $1', [t.id]))[0] ?? null;

/** The waiting fill jobs of a tenant, from the queue's own table. */
const queuedFills = async (t: Tenant) =>
  (onPostgres
    ? await server.app.db.query<{ payload: { tenant_id: string } }>(
        `select j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
            where k.identifier = 'graph_fill' and j.locked_at is null`,
      )
    : await server.app.db.query<{ payload: { tenant_id: string } }>(`select payload from jobs where task = 'graph_fill' and locked_at is null`)
  ).filter((j) => j.payload.tenant_id === t.id).length;

const search = (t: Tenant, query: string, mode = 'vector') => t.api('POST', '/v1/memory/collections/main/search', { query, mode, min_score: 0, limit: 5 });

describe('a tenant below ORGMEM_GRAPH_FROM', () => {
  it('writes its memories outside the graph, queues no fill, and finds them by reading exactly, even when told to walk the graph', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const [first] = await add(t, notes(FROM - 1, 'small'));
    expect(await rows(t)).toEqual([[false, FROM - 1]]);
    expect(await state(t)).toBeNull();
    expect(await queuedFills(t)).toBe(0);
    server.app.config.search.exactScanMax = 0;
    try {
      for (const mode of ['vector', 'hybrid']) {
        const res = await search(t, 'small note 0 about the harbour ferry timetable', mode);
        expect(res.status).toBe(200);
        expect(res.body.results[0].id).toBe(first);
      }
    } finally {
      server.app.config.search.exactScanMax = undefined;
    }
  });
});

describe('a tenant reaching ORGMEM_GRAPH_FROM', () => {
  it('queues one fill, which adds every memory to the graph; later memories are written in it and searches walk it', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await add(t, notes(FROM - 5, 'early'));
    expect(await queuedFills(t)).toBe(0);
    await add(t, notes(5, 'reaching'));
    await add(t, notes(3, 'more'));
    expect(await queuedFills(t)).toBe(1);
    expect(await rows(t)).toEqual([[false, FROM + 3]]);

    expect(await fillGraph(server.app, t.id)).toBe(FROM + 3);
    expect(await state(t)).toEqual({ state: 'ready', error: null });
    expect(await rows(t)).toEqual([[true, FROM + 3]]);
    const [later] = await add(t, [{ text: 'The ferry to the islands leaves at seven' }]);
    expect(await rows(t)).toEqual([[true, FROM + 4]]);
    expect(await queuedFills(t)).toBe(1);
    // A second fill finds nothing left.
    expect(await fillGraph(server.app, t.id)).toBe(0);

    // A row taken out of the graph by hand is missed by a graph search and found by an exact
    // read: the searches below went through the graph. (Two wordings: the update bumps no
    // collection version, so a repeated query would be answered from the search cache.)
    await server.app.db.query('update memories set graphed = false where tenant_id = $1 and id = $2', [t.id, later]);
    expect((await search(t, 'The ferry to the islands leaves at seven')).body.results[0].id).toBe(later);
    server.app.config.search.exactScanMax = 0;
    try {
      expect((await search(t, 'the ferry to the islands leaves at seven o clock')).body.results.map((r: { id: string }) => r.id)).not.toContain(later);
    } finally {
      server.app.config.search.exactScanMax = undefined;
    }
  });

  it('waits for an insert that read "not in the graph" to commit before marking the tenant, so that insert\'s rows are filled too', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await add(t, notes(FROM, 'before'));
    const order: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    // An insert in flight: it has read the state (not graphed) and writes its row so, then waits.
    const insert = server.app.db.transaction(async (tx) => {
      const graphed = await graphedInsert(tx, server.app, t.id, 1);
      expect(graphed).toBe(false);
      await tx.query(
        `insert into memories (tenant_id, id, collection, text, embedding, graphed)
         select tenant_id, gen_random_uuid(), collection, 'in flight', embedding, $2 from memories where tenant_id = $1 limit 1`,
        [t.id, graphed],
      );
      started();
      await released;
      order.push('insert committed');
    });
    await inFlight;
    const fill = fillGraph(server.app, t.id).then((n) => {
      order.push('fill done');
      return n;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(order).toEqual([]);
    release();
    await insert;
    expect(await fill).toBe(FROM + 1);
    expect(order).toEqual(['insert committed', 'fill done']);
    expect(await rows(t)).toEqual([[true, FROM + 1]]);
  });

  it('leaves no memory outside the graph when bulk writes go on during the fill', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await add(t, notes(FROM, 'start'));
    const writes = Array.from({ length: 6 }, (_, i) => add(t, notes(20, `during-${i}`)));
    const fill = fillGraph(server.app, t.id);
    await Promise.all([...writes, fill]);
    expect(await rows(t)).toEqual([[true, FROM + 120]]);
    expect(await state(t)).toEqual({ state: 'ready', error: null });
  });
});

describe('a failed fill', () => {
  it('keeps the tenant exact, shows in its pipeline health, and is queued again by the next write; a fill then clears it', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await add(t, notes(FROM - 1, 'failing'));
    expect(await queuedFills(t)).toBe(0);
    // A fill that marked the tenant and then failed.
    await server.app.db.query(`insert into graph_tenants (tenant_id, state) values ($1, 'filling')`, [t.id]);
    await recordFillFailure(server.app, t.id, 'canceling statement due to statement timeout');
    const jobs = async () => (await t.api('GET', '/v1/memory/admin/stats')).body.jobs;
    expect(await jobs()).toMatchObject({ failed_graph_fills: 1 });
    expect((await t.api('GET', '/v1/memory/collections/main/health')).body.jobs).toMatchObject({ failed_graph_fills: 1 });
    server.app.config.search.exactScanMax = 0;
    try {
      expect((await search(t, 'failing note 3 about the harbour ferry timetable')).body.results[0].text).toBe(
        'failing note 3 about the harbour ferry timetable',
      );
    } finally {
      server.app.config.search.exactScanMax = undefined;
    }

    // The tenant is marked: the write's own row is in the graph, and the fill is queued again.
    await add(t, notes(1, 'next'));
    expect(await queuedFills(t)).toBe(1);
    expect(await rows(t)).toEqual([
      [false, FROM - 1],
      [true, 1],
    ]);
    expect(await fillGraph(server.app, t.id)).toBe(FROM - 1);
    expect(await state(t)).toEqual({ state: 'ready', error: null });
    expect(await jobs()).toMatchObject({ failed_graph_fills: 0 });
  });

  it('of a deleted tenant does nothing', async () => {
    expect(await fillGraph(server.app, '00000000-0000-4000-8000-000000000000')).toBe(0);
  });
});

describe('orgmem graph-tenants: each tenant where ORGMEM_GRAPH_FROM puts it', () => {
  /** Where a tenant stands in the lists of the command: 'leave', 'enter' or null. */
  const listed = async (t: Tenant) => {
    const { leave, enter } = await misplacedTenants(server.app.db, FROM);
    const at = (list: Array<{ tenantId: string; memories: number }>) => list.find((x) => x.tenantId === t.id);
    return at(leave) ? ['leave', at(leave)!.memories] : at(enter) ? ['enter', at(enter)!.memories] : null;
  };
  /** A small tenant in the graph, as a database from before ORGMEM_GRAPH_FROM holds every tenant (or one whose setting was raised). */
  const graphedSmall = async (n: number, tag: string) => {
    const t = await newTenant(server.url, server.adminKey);
    await add(t, notes(n, tag));
    expect(await fillGraph(server.app, t.id)).toBe(n);
    return t;
  };

  it('takes a small tenant out: its rows leave the graph, its searches read exactly, its writes stay outside; a large one stays', async () => {
    const small = await graphedSmall(10, 'small-in');
    const large = await graphedSmall(FROM + 2, 'large-in');
    expect(await listed(small)).toEqual(['leave', 10]);
    expect(await listed(large)).toBeNull();

    expect(await leaveGraph(server.app.db, small.id, FROM)).toBe(10);
    expect(await state(small)).toBeNull();
    expect(await rows(small)).toEqual([[false, 10]]);
    expect(await listed(small)).toBeNull();
    const [later] = await add(small, [{ text: 'The harbour ferry timetable changes in winter' }]);
    expect(await rows(small)).toEqual([[false, 11]]);
    expect(await queuedFills(small)).toBe(0);
    // Told to walk the graph, it reads exactly: its rows are found though none is in the graph.
    server.app.config.search.exactScanMax = 0;
    try {
      expect((await search(small, 'The harbour ferry timetable changes in winter')).body.results[0].id).toBe(later);
    } finally {
      server.app.config.search.exactScanMax = undefined;
    }
    // Run again, it has nothing to do; the large tenant is never taken out.
    expect(await leaveGraph(server.app.db, large.id, FROM)).toBeNull();
    expect(await state(large)).toEqual({ state: 'ready', error: null });
    expect(await rows(large)).toEqual([[true, FROM + 2]]);
  });

  it('finishes a leave that stopped part way, and keeps a tenant whose fill has not finished', async () => {
    const stopped = await graphedSmall(6, 'stopped');
    // Unmarked, then stopped before its rows left the graph.
    await server.app.db.query('delete from graph_tenants where tenant_id = $1', [stopped.id]);
    expect(await listed(stopped)).toEqual(['leave', 6]);
    expect(await leaveGraph(server.app.db, stopped.id, FROM)).toBe(6);
    expect(await rows(stopped)).toEqual([[false, 6]]);
    expect(await listed(stopped)).toBeNull();

    const filling = await newTenant(server.url, server.adminKey);
    await add(filling, notes(4, 'filling'));
    await server.app.db.query(`insert into graph_tenants (tenant_id, state) values ($1, 'filling')`, [filling.id]);
    expect(await listed(filling)).toBeNull();
    expect(await leaveGraph(server.app.db, filling.id, FROM)).toBeNull();
    expect(await state(filling)).toEqual({ state: 'filling', error: null });
  });

  it('keeps a tenant that grew to ORGMEM_GRAPH_FROM after it was listed', async () => {
    const t = await graphedSmall(FROM - 2, 'growing');
    expect(await listed(t)).toEqual(['leave', FROM - 2]);
    await add(t, notes(2, 'grown'));
    expect(await leaveGraph(server.app.db, t.id, FROM)).toBeNull();
    expect(await state(t)).toEqual({ state: 'ready', error: null });
    expect(await rows(t)).toEqual([[true, FROM]]);
  });

  it('lists a tenant at ORGMEM_GRAPH_FROM out of the graph to enter it (a lowered setting, or a fill not yet run)', async () => {
    const t = await newTenant(server.url, server.adminKey);
    await add(t, notes(FROM, 'waiting'));
    expect(await listed(t)).toEqual(['enter', FROM]);
    expect(await fillGraph(server.app, t.id)).toBe(FROM);
    expect(await listed(t)).toBeNull();
  });

  it('a step taking rows out changes nothing once a fill has marked the tenant again', async () => {
    const t = await graphedSmall(5, 'refilled');
    // The real database, with a fill marking the tenant between the leave's unmarking and its first step.
    let transactions = 0;
    const db: Db = {
      ...server.app.db,
      async transaction(fn) {
        if (++transactions === 2) await server.app.db.query(`insert into graph_tenants (tenant_id, state) values ($1, 'filling')`, [t.id]);
        return server.app.db.transaction(fn);
      },
    };
    expect(await leaveGraph(db, t.id, FROM)).toBe(0);
    expect(transactions).toBe(2);
    expect(await rows(t)).toEqual([[true, 5]]);
    expect(await fillGraph(server.app, t.id)).toBe(0);
    expect(await state(t)).toEqual({ state: 'ready', error: null });
  });
});

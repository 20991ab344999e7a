/**
 * The service's search against the bare SQL of the same search: how much time the
 * service adds to what its statements cost.
 *
 *   node --import tsx bench/search/bare.ts --n 100000 [--db NAME] [--samples 200] [--modes hybrid,vector]
 *
 * Runs on a database loaded by `bench/search/run.ts --n N --load-only` (or `--keep`), with the
 * API key it left in /tmp/<db>.key. For each query, the service's search runs in this process
 * (the handler's `search()` on an App opened as `orgmem serve` opens it, hash embedder, pool of
 * 10) while every statement it sends is recorded: SQL, parameters, transaction and which
 * statements had finished when it started. Then the same statements run bare, straight on
 * postgres.js with the port's options (prepared, its connection settings): same SQL and parameters, so the same
 * plans; a statement starts when the ones that had finished before it in the service's run are
 * done, so what ran in parallel there runs in parallel here, and transactions are replayed as
 * transactions, with their statements pipelined as the service sent them. The service's
 * A second figure, the SQL floor, times only the statements that read data, with the settings
 * and transaction boundaries put in place beforehand (floor() below): what the search's SQL
 * costs without any round trip of its own.
 * `search_ms` and the bare times are measured query by query on the same warm pages: each query
 * first runs once unmeasured (recorded), then the service's search and the bare replay run in
 * turn, in alternating order; the result cache is off (ORGMEM_SEARCH_CACHE_MB=0) so the service
 * searches again.
 * Prints p50 / p95 of each and the service's ratio to both, per mode.
 *
 * With `--explain N`, first (before anything warms the caches) N other queries each run once in
 * hybrid mode with every statement that reads data preceded by its EXPLAIN (ANALYZE, BUFFERS) on
 * the same connection or transaction: a line a statement with its execution and planning time,
 * the shared buffers it found (hit) and read in, and the time those reads took (PostgreSQL's
 * `track_io_timing`, set for the run's database: `alter database ... set track_io_timing = on`).
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { z } from 'zod';
import type { Db, Queryable, Row, Tx } from '../../src/ports/db/db.ts';
import { CONNECTION_SETTINGS } from '../../src/ports/db/postgres.ts';
import { searchFields } from '../../src/schemas/search.ts';
import { search } from '../../src/services/search/search.ts';
import { round, summary } from '../lib/stats.ts';
import { queries } from './corpus.ts';
import { openInProcess } from './in-process.ts';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '100000' },
    db: { type: 'string' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    samples: { type: 'string', default: '200' },
    modes: { type: 'string', default: 'hybrid,vector' },
    collection: { type: 'string', default: 'main' },
    explain: { type: 'string', default: '0' },
  },
});
const dbName = args.db ?? `orgmem_bench_${args.n}`;
const POOL = 10;

/** One statement, or one transaction with its statements; `after`: the indices of the operations done when it started. */
interface Op {
  sql?: string;
  params?: unknown[];
  tx?: Op[];
  after: number[];
}

/** Records the operations of a run (a list per level: the search's, each transaction's). */
class Recorder {
  ops: Op[] = [];
  private done = new Set<number>();

  track<T>(op: Op, run: () => Promise<T>): Promise<T> {
    const i = this.ops.push({ ...op, after: [...this.done] }) - 1;
    return run().finally(() => this.done.add(i));
  }
}

/** What EXPLAIN (ANALYZE, BUFFERS) says of one statement: its first words and what it cost. */
interface Explained {
  statement: string;
  /** Rows its nodes read and dropped (a filter's, a join's), summed over the plan. */
  removed: number;
  execution_ms: number;
  planning_ms: number;
  hit: number;
  read: number;
  read_ms: number;
}

/** Runs EXPLAIN (ANALYZE, BUFFERS) of a statement that reads data on `q`, before the statement itself. */
async function explainFirst(q: Queryable, sql: string, params: unknown[], into: Explained[] | null) {
  if (!into || isSetting({ sql, after: [] })) return;
  type Node = Record<string, number> & { Plans?: Node[] };
  type Plan = { Plan: Node; 'Execution Time': number; 'Planning Time': number };
  const removed = (n: Node): number =>
    (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Join Filter'] ?? 0) + (n.Plans ?? []).reduce((sum, c) => sum + removed(c), 0);
  const [row] = await q.query<{ 'QUERY PLAN': Plan[] }>(`explain (analyze, buffers, format json) ${sql}`, params);
  const out = row!['QUERY PLAN'][0]!;
  into.push({
    statement: sql.replace(/\s+/g, ' ').trim().slice(0, 70),
    removed: removed(out.Plan),
    execution_ms: round(out['Execution Time']),
    planning_ms: round(out['Planning Time']),
    hit: out.Plan['Shared Hit Blocks']!,
    read: out.Plan['Shared Read Blocks']!,
    read_ms: round(out.Plan['I/O Read Time'] ?? 0),
  });
}

/** The App's database, recording what the search sends (and with `explain` set, explaining it first). */
function recording(db: Db, rec: { current: Recorder | null; explain: Explained[] | null }): Db {
  const wrapTx = (tx: Tx, r: Recorder): Tx => ({
    query: <T = Row>(sql: string, params: unknown[] = []) =>
      r.track({ sql, params, after: [] }, async () => {
        await explainFirst(tx, sql, params, rec.explain);
        return tx.query<T>(sql, params);
      }),
    exec: (sql) => tx.exec(sql),
    savepoint: (fn) => tx.savepoint(fn),
  });
  return {
    kind: db.kind,
    query: <T = Row>(sql: string, params: unknown[] = []) =>
      rec.current
        ? rec.current.track({ sql, params, after: [] }, async () => {
            await explainFirst(db, sql, params, rec.explain);
            return db.query<T>(sql, params);
          })
        : db.query<T>(sql, params),
    exec: (sql) => db.exec(sql),
    transaction: (fn) => {
      const r = rec.current;
      if (!r) return db.transaction(fn);
      const inner = new Recorder();
      const op: Op = { tx: inner.ops, after: [] };
      return r.track(op, () => db.transaction((tx) => fn(wrapTx(tx, inner))));
    },
    close: () => db.close(),
  } satisfies Queryable & Db;
}

/** Runs recorded operations with the same order constraints; resolves when all are done. */
function replay(ops: Op[], on: postgres.Sql | postgres.TransactionSql, sql: postgres.Sql): Promise<unknown> {
  const runs: Array<Promise<unknown>> = [];
  for (const op of ops) {
    const before = op.after.map((i) => runs[i]!);
    runs.push(
      Promise.all(before).then(() =>
        op.tx ? sql.begin((tx) => replay(op.tx!, tx, sql)) : on.unsafe(op.sql!, op.params as postgres.ParameterOrJSON<never>[], { prepare: true }),
      ),
    );
  }
  return Promise.all(runs);
}

const isSetting = (op: Op) => /^\s*select set_config\(/i.test(op.sql ?? '');

/**
 * The floor: only the statements that read data, timed. Each operation gets a reserved
 * connection of its own; a transaction's BEGIN and settings statements run there before the
 * clock starts, its COMMIT after it stops, so its searches run with the same settings (same
 * plans) but without the round trips that carry them. Same order constraints as replay().
 */
async function floor(ops: Op[], conns: postgres.ReservedSql[]): Promise<number> {
  const conn = (i: number) => conns[i % conns.length]!;
  for (const [i, op] of ops.entries()) {
    if (!op.tx) continue;
    await conn(i).unsafe('begin');
    for (const s of op.tx.filter(isSetting)) await conn(i).unsafe(s.sql!, s.params as postgres.ParameterOrJSON<never>[], { prepare: true });
  }
  const run = (list: Op[], on: (i: number) => postgres.ReservedSql) => {
    const runs: Array<Promise<unknown>> = [];
    for (const [i, op] of list.entries()) {
      const before = op.after.map((j) => runs[j]!);
      runs.push(
        isSetting(op)
          ? Promise.resolve()
          : Promise.all(before).then(() =>
              op.tx ? run(op.tx, () => on(i)) : on(i).unsafe(op.sql!, op.params as postgres.ParameterOrJSON<never>[], { prepare: true }),
            ),
      );
    }
    return Promise.all(runs);
  };
  const started = performance.now();
  await run(ops, conn);
  const ms = performance.now() - started;
  for (const [i, op] of ops.entries()) if (op.tx) await conn(i).unsafe('commit');
  return ms;
}

const { app, ctx, url, close } = await openInProcess({ base: args.base!, db: dbName }, POOL, { ORGMEM_SEARCH_CACHE_MB: '0' });
const rec: { current: Recorder | null; explain: Explained[] | null } = { current: null, explain: null };
app.db = recording(app.db, rec);
// The port's options (src/ports/db/postgres.ts): prepared statements, its connection settings.
const bare = postgres(url, { max: POOL, onnotice: () => {}, prepare: true, connection: CONNECTION_SETTINGS });
const input = z.object(searchFields);
// The floor's connections (a search runs at most a few operations at once; more is spare).
const reserved = await Promise.all(Array.from({ length: 6 }, () => bare.reserve()));
try {
  const run = async (query: string, mode: string, record: boolean) => {
    rec.current = record ? new Recorder() : null;
    const res = await search(ctx, input.parse({ query, mode, limit: 10, min_score: 0 }), { collection: args.collection!, nameCollections: false });
    const ops = rec.current?.ops ?? [];
    rec.current = null;
    return { searchMs: res.search_ms, ops };
  };
  for (const q of queries(Number(args.explain), 23)) {
    rec.explain = [];
    await run(q, 'hybrid', true);
    for (const e of rec.explain) console.log(JSON.stringify({ query: q, ...e }));
    rec.explain = null;
  }
  const qs = queries(Number(args.samples), 7);
  // Warm both pools and PostgreSQL's caches alike (not for --explain alone: --samples 0).
  for (const q of qs.length ? queries(50, 99) : []) {
    const { ops } = await run(q, 'hybrid', true);
    await replay(ops, bare, bare);
    await floor(ops, reserved);
  }
  for (const mode of qs.length ? args.modes!.split(',') : []) {
    const service: number[] = [];
    const sqlOnly: number[] = [];
    const floorMs: number[] = [];
    let statements = 0;
    for (const [i, q] of qs.entries()) {
      const { ops } = await run(q, mode, true);
      const timeBare = async () => {
        const started = performance.now();
        await replay(ops, bare, bare);
        sqlOnly.push(performance.now() - started);
      };
      const timeService = async () => void service.push((await run(q, mode, false)).searchMs);
      const timeFloor = async () => void floorMs.push(await floor(ops, reserved));
      if (i % 2) await timeBare().then(timeFloor).then(timeService);
      else await timeService().then(timeFloor).then(timeBare);
      statements += ops.reduce((n, op) => n + (op.tx ? op.tx.length + 2 : 1), 0);
    }
    const s = summary(service);
    const b = summary(sqlOnly);
    const f = summary(floorMs);
    console.log(
      JSON.stringify({
        database: dbName,
        collection: args.collection,
        mode,
        samples: qs.length,
        statements_per_search: round(statements / qs.length),
        service_search_ms: s,
        bare_sql_ms: b,
        sql_floor_ms: f,
        ratio_p50: round(s.p50 / b.p50, 2),
        ratio_p95: round(s.p95 / b.p95, 2),
        floor_ratio_p50: round(s.p50 / f.p50, 2),
        floor_ratio_p95: round(s.p95 / f.p95, 2),
      }),
    );
  }
} finally {
  for (const r of reserved) r.release();
  await bare.end();
  await close();
}

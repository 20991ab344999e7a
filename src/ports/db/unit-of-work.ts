import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db, Queryable, Tx } from './db.ts';

/**
 * How the writes of one call commit with the record of that call (its audit entry), so that no
 * change is ever committed without its record:
 * - `together`: the call's first write opens a transaction that every later statement of the
 *   call joins (its own transactions become savepoints); it commits with the record when the call
 *   returns, and a throw rolls all of it back. Reads before the first write run outside it, so a
 *   call holds a transaction only from its first write on.
 * - `in-steps`: for calls that commit in steps on purpose (a raw memory kept when the LLM then
 *   fails, files stored one by one): each transaction commits on its own, and the first one to
 *   commit carries the record (made without the call's output, which does not exist yet).
 * A call that wrote nothing has its record written on its own when it returns.
 */
export type CommitMode = 'together' | 'in-steps';

/** Writes the record: `output` is the call's, or undefined for an in-steps record. */
export type Recorder = (q: Queryable, output: unknown) => Promise<void>;

interface Unit {
  mode: CommitMode;
  record: Recorder;
  recorded: boolean;
  /** Set when the call returned or threw: statements still running in its async context then use the pool. */
  closed: boolean;
  /** `together`: the open transaction, once the first write asked for it. */
  held?: Promise<Tx>;
  /** Ends the held transaction: commit (true) or roll back (false). */
  release?: (commit: boolean) => void;
  /** Settles when the held transaction has ended: with the error if it failed, never rejecting. */
  ended?: Promise<unknown>;
  /** Savepoints of one held transaction run one at a time. */
  queue: Promise<unknown>;
}

const units = new AsyncLocalStorage<Unit>();
const raw = new WeakMap<Db, Db>();
const ROLLBACK = Symbol('rollback');

// Plain reads run outside the held transaction until the call first writes; anything else (a
// write, a lock, a queued job, a setting) is taken as a write. Erring that way only starts the
// transaction earlier.
const isRead = (sql: string) => /^\s*select\b/i.test(sql) && !/\b(add_job|for\s+update|for\s+share|set_config|nextval)\b/i.test(sql);

function hold(db: Db, unit: Unit): Promise<Tx> {
  unit.held ??= new Promise<Tx>((resolve, reject) => {
    const decided = new Promise<boolean>((r) => (unit.release = r));
    unit.ended = db
      .transaction(async (tx) => {
        resolve(tx);
        if (!(await decided)) throw ROLLBACK;
      })
      .then(
        () => undefined,
        (err) => {
          reject(err);
          return err === ROLLBACK ? undefined : err;
        },
      );
  });
  return unit.held;
}

/** A transaction of the call inside its held one: one at a time, as savepoints cannot interleave. */
function savepoint<T>(tx: Tx, unit: Unit, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const run = unit.queue.then(() => tx.savepoint(fn));
  unit.queue = run.catch(() => {});
  return run;
}

/** A step of an in-steps call: the record goes into the first step that commits. */
async function step<T>(db: Db, unit: Unit, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (unit.recorded) return db.transaction(fn);
  const result = await db.transaction(async (tx) => {
    const r = await fn(tx);
    await unit.record(tx, undefined);
    return r;
  });
  unit.recorded = true;
  return result;
}

/** The database as the app uses it: statements made inside `inUnitOfWork` follow its unit's mode. */
export function withUnitsOfWork(db: Db): Db {
  const active = () => {
    const unit = units.getStore();
    return unit && !unit.closed ? unit : undefined;
  };
  const wrapped: Db = {
    kind: db.kind,
    async query(sql, params) {
      const unit = active();
      if (!unit || isRead(sql)) return unit?.held ? (await unit.held).query(sql, params) : db.query(sql, params);
      if (unit.mode === 'together') return (await hold(db, unit)).query(sql, params);
      return step(db, unit, (tx) => tx.query(sql, params));
    },
    async exec(sql) {
      const unit = active();
      if (!unit) return db.exec(sql);
      if (unit.mode === 'together') return (await hold(db, unit)).exec(sql);
      return step(db, unit, (tx) => tx.exec(sql));
    },
    async transaction(fn) {
      const unit = active();
      if (!unit) return db.transaction(fn);
      if (unit.mode === 'together') return savepoint(await hold(db, unit), unit, fn);
      return step(db, unit, fn);
    },
    close: () => db.close(),
  };
  raw.set(wrapped, db);
  return wrapped;
}

/**
 * Runs `work` (a call) as one unit on a database made by `withUnitsOfWork`, writing its record
 * with its writes as `mode` says. The record failing fails the call, and in `together` mode
 * undoes its writes.
 */
export async function inUnitOfWork<T>(db: Db, mode: CommitMode, work: () => Promise<T>, record: Recorder): Promise<T> {
  const base = raw.get(db);
  if (!base) throw new Error('inUnitOfWork needs the database made by withUnitsOfWork');
  const unit: Unit = { mode, record, recorded: false, closed: false, queue: Promise.resolve() };
  let output: T;
  try {
    output = await units.run(unit, work);
  } catch (err) {
    unit.closed = true;
    unit.release?.(false);
    await unit.ended;
    throw err;
  }
  unit.closed = true;
  if (unit.held) {
    try {
      await record(await unit.held, output);
    } catch (err) {
      unit.release?.(false);
      await unit.ended;
      throw err;
    }
    unit.release!(true);
    const failed = await unit.ended;
    if (failed) throw failed;
  } else if (!unit.recorded) {
    await record(base, output);
  }
  return output;
}

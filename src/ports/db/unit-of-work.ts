import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db, Queryable, Tx } from './db.ts';

/**
 * How the writes of one call commit with the record of that call (its audit entry), so that no
 * change is ever committed without its record:
 * - `together`: the call's first write opens a transaction that every later statement of the
 *   call joins (its own transactions become savepoints); it commits with the record when the call
 *   returns, and a throw rolls all of it back. Until the call first writes, nothing is held: its
 *   reads run on their own, and a transaction of the call that only read (a search) commits as
 *   usual, so a call holds a transaction only from its first write on.
 * - `in-steps`: for calls that commit in steps on purpose (a raw memory kept when the LLM then
 *   fails, files stored one by one): each transaction commits on its own, and the first one to
 *   commit carries the record (made without the call's output, which does not exist yet).
 * A call that wrote nothing has its record written on its own when it returns.
 */
export type CommitMode = 'together' | 'in-steps';

/** Writes the record: `output` is the call's, or undefined for an in-steps record. */
export type Recorder = (q: Queryable, output: unknown) => Promise<void>;

// Plain reads, with the settings a search makes for its own transaction, are not writes; anything
// else (a write, a lock, a queued job) is. Erring that way only holds a transaction earlier.
const isRead = (sql: string) => /^\s*select\b/i.test(sql) && !/\b(add_job|for\s+update|for\s+share)\b/i.test(sql);

const ROLLBACK = Symbol('rollback');

/** A transaction kept open until it is ended, which knows whether anything was written in it. */
class OpenTx {
  written = false;
  readonly tx: Tx;
  private constructor(
    tx: Tx,
    private readonly decide: (commit: boolean) => void,
    /** Settles when the transaction has ended: with its error if it failed, never rejecting. */
    private readonly ended: Promise<unknown>,
  ) {
    this.tx = this.track(tx);
  }

  static begin(db: Db): Promise<OpenTx> {
    return new Promise((resolve, reject) => {
      let decide!: (commit: boolean) => void;
      const decided = new Promise<boolean>((r) => (decide = r));
      let opened = false;
      const ended = db
        .transaction(async (tx) => {
          opened = true;
          resolve(new OpenTx(tx, decide, ended));
          if (!(await decided)) throw ROLLBACK;
        })
        .then(
          () => undefined,
          (err) => {
            if (!opened) reject(err);
            return err === ROLLBACK ? undefined : err;
          },
        );
    });
  }

  /** Commits (throwing what the commit threw) or rolls back. */
  async end(commit: boolean): Promise<void> {
    this.decide(commit);
    const failed = await this.ended;
    if (failed && commit) throw failed;
  }

  private track(tx: Tx): Tx {
    return {
      query: (sql, params) => {
        if (!isRead(sql)) this.written = true;
        return tx.query(sql, params);
      },
      exec: (sql) => {
        this.written = true;
        return tx.exec(sql);
      },
      savepoint: (fn) => tx.savepoint((inner) => fn(this.track(inner))),
    };
  }
}

interface Unit {
  mode: CommitMode;
  record: Recorder;
  recorded: boolean;
  /** Set when the call returned or threw: statements still running in its async context then use the pool. */
  closed: boolean;
  /** `together`: the transaction the call's statements join, once it wrote (or while a transaction of it runs). */
  held?: Promise<OpenTx>;
  /** Savepoints of one held transaction run one at a time. */
  queue: Promise<unknown>;
}

const units = new AsyncLocalStorage<Unit>();
const raw = new WeakMap<Db, Db>();

/** A transaction of a `together` call: a savepoint once it holds one, else the one it may come to hold. */
async function joined<T>(db: Db, unit: Unit, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (unit.held) {
    const { tx } = await unit.held;
    const run = unit.queue.then(() => tx.savepoint(fn));
    unit.queue = run.catch(() => {});
    return run;
  }
  const held = OpenTx.begin(db);
  unit.held = held;
  const open = await held;
  let result: T;
  try {
    result = await fn(open.tx);
  } catch (err) {
    unit.held = undefined;
    await open.end(false);
    throw err;
  }
  // Only read (a search): it ends now, so a call holds nothing before its first write.
  if (!open.written) {
    unit.held = undefined;
    await open.end(true);
  }
  return result;
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
      if (unit?.held) return (await unit.held).tx.query(sql, params);
      if (!unit || isRead(sql)) return db.query(sql, params);
      if (unit.mode === 'together') return joined(db, unit, (tx) => tx.query(sql, params));
      return step(db, unit, (tx) => tx.query(sql, params));
    },
    async exec(sql) {
      const unit = active();
      if (!unit) return db.exec(sql);
      if (unit.mode === 'together') return joined(db, unit, (tx) => tx.exec(sql));
      return step(db, unit, (tx) => tx.exec(sql));
    },
    async transaction(fn) {
      const unit = active();
      if (!unit) return db.transaction(fn);
      if (unit.mode === 'together') return joined(db, unit, fn);
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
    await (await unit.held?.catch(() => undefined))?.end(false);
    throw err;
  }
  unit.closed = true;
  if (unit.held) {
    const open = await unit.held;
    try {
      await record(open.tx, output);
    } catch (err) {
      await open.end(false);
      throw err;
    }
    await open.end(true);
  } else if (!unit.recorded) {
    await record(base, output);
  }
  return output;
}

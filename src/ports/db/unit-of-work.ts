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
 *
 * A call may write to a second database (a tenant's own, see services/tenant-db): its
 * statements there are held in a transaction of that database the same way, and at the end the
 * record is written first, then the other databases commit, then the record's own (the "home"
 * database, the one `inUnitOfWork` was given). A failed record undoes everything; only a crash
 * between those commits can leave the other database's writes without their record. In-steps
 * writes to another database commit on their own, and the record is written when the call returns.
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

/** `together`: the transaction a call's statements on one database join, once it wrote there (or while a transaction of it runs). */
interface Held {
  open: Promise<OpenTx>;
  /** Savepoints of one held transaction run one at a time. */
  queue: Promise<unknown>;
}

interface Unit {
  mode: CommitMode;
  /** The database the record goes to. */
  home: Db;
  record: Recorder;
  recorded: boolean;
  /** Set when the call returned or threw: statements still running in its async context then use the pool. */
  closed: boolean;
  /** Per database (unwrapped). */
  held: Map<Db, Held>;
}

const units = new AsyncLocalStorage<Unit>();
const raw = new WeakMap<Db, Db>();

/** A transaction of a `together` call: a savepoint once it holds one, else the one it may come to hold. */
async function joined<T>(db: Db, unit: Unit, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const held = unit.held.get(db);
  if (held) {
    const { tx } = await held.open;
    const run = held.queue.then(() => tx.savepoint(fn));
    held.queue = run.catch(() => {});
    return run;
  }
  const opening = OpenTx.begin(db);
  unit.held.set(db, { open: opening, queue: Promise.resolve() });
  const open = await opening;
  let result: T;
  try {
    result = await fn(open.tx);
  } catch (err) {
    unit.held.delete(db);
    await open.end(false);
    throw err;
  }
  // Only read (a search): it ends now, so a call holds nothing before its first write.
  if (!open.written) {
    unit.held.delete(db);
    await open.end(true);
  }
  return result;
}

/** A step of an in-steps call: the record goes into the first step that commits. */
async function step<T>(db: Db, unit: Unit, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (unit.recorded || db !== unit.home) return db.transaction(fn);
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
      const held = unit?.held.get(db);
      if (held) return (await held.open).tx.query(sql, params);
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
  const home = raw.get(db);
  if (!home) throw new Error('inUnitOfWork needs the database made by withUnitsOfWork');
  const unit: Unit = { mode, home, record, recorded: false, closed: false, held: new Map() };
  const opened = async () => Promise.all([...unit.held.values()].map((h) => h.open.catch(() => undefined)));
  let output: T;
  try {
    output = await units.run(unit, work);
  } catch (err) {
    unit.closed = true;
    await Promise.all((await opened()).map((open) => open?.end(false)));
    throw err;
  }
  unit.closed = true;
  const others = [...unit.held.entries()].filter(([d]) => d !== home);
  // The record needs a transaction of its own database when another one's writes commit before it.
  const homeHeld = unit.held.get(home)?.open ?? (others.length ? OpenTx.begin(home) : undefined);
  if (!homeHeld) {
    if (!unit.recorded) await record(home, output);
    return output;
  }
  const own = await homeHeld;
  const rest = await Promise.all(others.map(([, h]) => h.open));
  try {
    if (!unit.recorded) await record(own.tx, output);
    for (const open of rest) await open.end(true);
  } catch (err) {
    await Promise.all([own, ...rest].map((open) => open.end(false).catch(() => undefined)));
    throw err;
  }
  await own.end(true);
  return output;
}

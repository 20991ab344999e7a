/**
 * The database port. SQL is written once, with $n parameters, and runs on PostgreSQL
 * (postgres.js) and on PGlite. Conventions that keep both drivers alike:
 * - pass JSON values as plain objects/arrays with an explicit `::jsonb` cast;
 * - cast counts and other bigints to `::int` (postgres.js returns int8 as a string);
 * - pass vectors as pgvector text (`toVectorLiteral`) with a `::vector` cast.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export type Row = Record<string, unknown>;

export interface Queryable {
  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** An open transaction. */
export interface Tx extends Queryable {
  /** Runs `fn` in a savepoint: a throw rolls back what `fn` did, and the transaction goes on. */
  savepoint<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction; a throw rolls everything back. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The embedded database has one connection, and every other tenant's statements wait while a
 * long background loop's step (an import, a large file, a graph fill) holds it. There those loops
 * share a budget of BACKGROUND_SHARE of the connection's time: each step spends what it took, and
 * a loop whose step leaves the budget short rests until it is paid back, so others' statements go
 * between the steps (bench/README.md, "Noisy neighbours"). PostgreSQL serves others meanwhile.
 */
const BACKGROUND_SHARE = 0.5;
/** How far ahead the budget may be saved: a loop that waited a long time runs this long at once. */
const SAVED_MS = 1000;
const budgets = new WeakMap<object, { ms: number; at: number }>();

/** Ends one step of a long background loop that began at `startedAt` (performance.now()). */
export async function endStep(db: Pick<Db, 'kind'>, startedAt: number): Promise<void> {
  if (db.kind !== 'pglite') return;
  const now = performance.now();
  const budget = budgets.get(db) ?? { ms: SAVED_MS, at: now };
  budget.ms = Math.min(SAVED_MS, budget.ms + (now - budget.at) * BACKGROUND_SHARE) - (now - startedAt);
  budget.at = now;
  budgets.set(db, budget);
  if (budget.ms < 0) await sleep(-budget.ms / BACKGROUND_SHARE);
}

export function toVectorLiteral(v: ArrayLike<number>): string {
  return `[${Array.prototype.join.call(v, ',')}]`;
}

export function fromVectorLiteral(s: string): number[] {
  return s.slice(1, -1).split(',').map(Number);
}

// postgres.js's own connection failures, Node's socket errors, and PostgreSQL's connection
// exception class (08), shutdowns (57P01-57P03) and a dropped database (3D000).
const UNREACHABLE =
  /^(CONNECT_TIMEOUT|CONNECTION_(CLOSED|ENDED|DESTROYED)|ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EAI_AGAIN|08...|57P0[123]|3D000)$/;

// A Citus coordinator whose transaction lost a worker node mid-way says so without an error
// code of the connection class (an internal error, XX000): known by its message.
const NODE_LOST = /^failure on connection marked as essential: /;

/** Whether a database error means the server cannot be reached or used now, rather than a bad statement. */
export const isUnreachable = (err: unknown): boolean => {
  const e = err as { code?: unknown; message?: unknown } | null;
  return UNREACHABLE.test(String(e?.code ?? '')) || (e?.code === 'XX000' && NODE_LOST.test(String(e.message ?? '')));
};

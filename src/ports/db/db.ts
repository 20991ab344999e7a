/**
 * The database port. SQL is written once, with $n parameters, and runs on PostgreSQL
 * (postgres.js) and on PGlite. Conventions that keep both drivers alike:
 * - pass JSON values as plain objects/arrays with an explicit `::jsonb` cast;
 * - cast counts and other bigints to `::int` (postgres.js returns int8 as a string);
 * - pass vectors as pgvector text (`toVectorLiteral`) with a `::vector` cast.
 */
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

export function toVectorLiteral(v: ArrayLike<number>): string {
  return `[${Array.prototype.join.call(v, ',')}]`;
}

export function fromVectorLiteral(s: string): number[] {
  return s.slice(1, -1).split(',').map(Number);
}

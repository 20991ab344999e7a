import postgres from 'postgres';
import type { Db, Queryable, Row, Tx } from './db.ts';

export interface PostgresOptions {
  /** Seconds to wait for a connection (postgres.js's default is 30). */
  connectTimeout?: number;
  /** Seconds after which an unused connection is closed (never, by default). */
  idleTimeout?: number;
}

/**
 * Settings of every connection the port opens (bench/search/bare.ts replays searches with them).
 * JIT off: every statement here is short, and compiling one with LLVM costs tens of
 * milliseconds, which a large filtered search's cost estimate would otherwise trigger.
 * Custom plans always: postgres.js prepares every statement, and PostgreSQL may switch one to a
 * generic plan after its fifth run; whether search takes the HNSW index, a filter's index, the
 * GIN index or a scan depends on how many rows the tenant, collection, filters and words
 * select, which a generic plan cannot know. Planning each time costs tens of microseconds.
 */
export const CONNECTION_SETTINGS = { jit: 'off', plan_cache_mode: 'force_custom_plan' };

export function openPostgres(url: string, max: number, opts: PostgresOptions = {}): Db {
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    prepare: true,
    connection: CONNECTION_SETTINGS,
    ...(opts.connectTimeout && { connect_timeout: opts.connectTimeout }),
    ...(opts.idleTimeout && { idle_timeout: opts.idleTimeout }),
  });
  const wrap = (s: postgres.Sql | postgres.TransactionSql): Queryable => ({
    async query<T = Row>(text: string, params: unknown[] = []) {
      return (await s.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as T[];
    },
    async exec(text: string) {
      await s.unsafe(text).simple();
    },
  });
  // postgres.js fails a whole transaction on any failed statement, even a caught one, unless the
  // statement ran in its own savepoint scope: so savepoints go through it rather than raw SQL.
  const wrapTx = (tx: postgres.TransactionSql): Tx => ({
    ...wrap(tx),
    savepoint: async (fn) => (await tx.savepoint((s) => fn(wrapTx(s)))) as Awaited<ReturnType<typeof fn>>,
  });
  const root = wrap(sql);
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction(fn) {
      return (await sql.begin((tx) => fn(wrapTx(tx)))) as Awaited<ReturnType<typeof fn>>;
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}

import postgres from 'postgres';
import type { Db, Queryable, Row, Tx } from './db.ts';

export function openPostgres(url: string, max: number): Db {
  // JIT off: every statement here is short, and compiling one with LLVM costs tens of
  // milliseconds, which a large filtered search's cost estimate would otherwise trigger.
  const sql = postgres(url, { max, onnotice: () => {}, prepare: true, connection: { jit: 'off' } });
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

import postgres from 'postgres';
import type { Db, Queryable, Row } from './db.ts';

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
  const root = wrap(sql);
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction(fn) {
      return (await sql.begin((tx) => fn(wrap(tx)))) as Awaited<ReturnType<typeof fn>>;
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}

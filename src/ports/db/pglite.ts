import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Db, Queryable, Row, Tx } from './db.ts';
import { acquireDirLock } from './dir-lock.ts';

/** Whether `dataDir` holds an embedded database (one openPglite made), rather than none yet. */
export const hasEmbeddedData = (dataDir: string) => existsSync(join(dataDir, 'pgdata', 'PG_VERSION'));

/** Embedded PostgreSQL (WASM) in a data directory, or in memory for `memory://`. */
export async function openPglite(dataDir: string): Promise<Db> {
  const inMemory = dataDir.startsWith('memory://');
  let release = () => {};
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    release = acquireDirLock(dataDir);
  }
  let pg: PGlite;
  try {
    pg = await PGlite.create(inMemory ? dataDir : join(dataDir, 'pgdata'), { extensions: { vector } });
  } catch (err) {
    release();
    throw err;
  }
  const wrap = (s: PGlite | Transaction): Queryable => ({
    async query<T = Row>(text: string, params: unknown[] = []) {
      return (await s.query<T>(text, params)).rows;
    },
    async exec(text: string) {
      await s.exec(text);
    },
  });
  let savepoints = 0;
  const wrapTx = (tx: Transaction): Tx => ({
    ...wrap(tx),
    async savepoint(fn) {
      const name = `sp_${++savepoints}`;
      await tx.query(`savepoint ${name}`);
      try {
        const result = await fn(wrapTx(tx));
        await tx.query(`release savepoint ${name}`);
        return result;
      } catch (err) {
        await tx.query(`rollback to savepoint ${name}`);
        throw err;
      }
    },
  });
  const root = wrap(pg);
  return {
    kind: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: (fn) => pg.transaction((tx) => fn(wrapTx(tx))),
    async close() {
      await pg.close();
      release();
    },
  };
}

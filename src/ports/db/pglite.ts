import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
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
  // PGlite runs each statement on this thread, and a chain of awaited statements continues in
  // microtasks, so a job's steps (the graph fill: minutes on halfvec) would hold the event loop
  // from the first to the last: no request was read meanwhile, and a client's next request on a
  // kept connection was reset when the keep-alive timer fired first. Each statement gives the
  // loop a turn after it.
  const wrap = (s: PGlite | Transaction): Queryable => ({
    async query<T = Row>(text: string, params: unknown[] = []) {
      const { rows } = await s.query<T>(text, params);
      await nextTurn();
      return rows;
    },
    async exec(text: string) {
      await s.exec(text);
      await nextTurn();
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

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { postgreSplitterOptions, splitQuery } from 'dbgate-query-splitter';
import type { Db } from '../ports/db/db.ts';
import type { VectorIndex } from '../ports/db/vector-storage.ts';
import { distribute, isCitus } from './citus.ts';
import { createStorage } from './vector-storage.ts';

/** The package's `sql/`: one folder up from the bundle in `dist/`, two from this source file. */
const SQL_DIR = ['../sql/', '../../sql/'].map((dir) => fileURLToPath(new URL(dir, import.meta.url))).find((dir) => existsSync(dir))!;
// Any constant works; it only has to be the same for every orgmem process.
const MIGRATION_LOCK = 7_211_946;

export class DimensionMismatchError extends Error {}

/**
 * Applies the numbered files of sql/ that have not run yet, in one transaction under an
 * advisory lock so that several processes starting together migrate once. The embedding
 * dimension is fixed by the first migration and checked on every later start. A new database
 * stores and indexes its embeddings as `vectorIndex` says (docs/vectors.md); an existing one
 * keeps what it holds until `orgmem vector-storage` converts it. On a Citus coordinator the
 * tables are then placed on the cluster (citus.ts).
 */
export async function migrate(db: Db, embeddingDim: number, vectorIndex: VectorIndex): Promise<void> {
  const files = readdirSync(SQL_DIR)
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort();
  await db.transaction(async (tx) => {
    if (db.kind === 'postgres') await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    // On Citus, DDL and distribution in one transaction must reach the workers over one
    // connection each (docs/citus.md).
    const citus = db.kind === 'postgres' && (await isCitus(tx));
    if (citus) await tx.query(`set local citus.multi_shard_modify_mode to 'sequential'`);
    // Only when missing: Citus sends CREATE EXTENSION, IF NOT EXISTS included, to every node, so
    // a process starting while a worker is down would fail to start (docs/citus.md).
    if (!(await tx.query(`select 1 from pg_extension where extname = 'vector'`)).length) await tx.query('create extension vector');
    await tx.query('create table if not exists schema_migrations (version int primary key, name text not null, applied_at timestamptz not null default now())');
    await tx.query('create table if not exists settings (key text primary key, value jsonb not null)');
    const [recorded] = await tx.query<{ value: number }>(`select value from settings where key = 'embedding_dim'`);
    if (recorded && Number(recorded.value) !== embeddingDim) {
      throw new DimensionMismatchError(
        `This database stores ${recorded.value}-dimensional embeddings but the configured embedder produces ${embeddingDim}. ` +
          `Configure the embedder the database was created with, or run \`orgmem reembed\` to re-embed every memory with the new one.`,
      );
    }
    if (!recorded) {
      await tx.query(`insert into settings (key, value) values ('embedding_dim', $1::jsonb)`, [embeddingDim]);
    }
    const applied = new Set((await tx.query<{ version: number }>('select version from schema_migrations')).map((r) => r.version));
    for (const file of files) {
      const version = Number(file.split('_')[0]);
      if (applied.has(version)) continue;
      const text = readFileSync(SQL_DIR + file, 'utf8').replaceAll('{{EMBEDDING_DIM}}', String(embeddingDim));
      // Statement by statement: a Citus coordinator sends a distributed table's DDL to its shards
      // as the text it was given, and a worker refuses several commands in one (an upgrade after
      // the tables were distributed would fail).
      for (const statement of splitQuery(text, postgreSplitterOptions)) await tx.exec(statement as string);
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [version, file]);
    }
    if (!applied.size) await createStorage(tx, vectorIndex, embeddingDim);
    if (citus) await distribute(tx);
  });
}

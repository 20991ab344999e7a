import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Queryable } from '../../src/ports/db/db.ts';

const admin = (url: string) => postgres(url, { max: 1, onnotice: () => {} });

/** Whether TEST_DATABASE_URL is a Citus coordinator (the citus extension is in its database). */
export async function isCitusServer(base: string): Promise<boolean> {
  const sql = admin(base);
  try {
    return (await sql`select 1 from pg_extension where extname = 'citus'`).length > 0;
  } finally {
    await sql.end();
  }
}

let citus: Promise<boolean> | undefined;
// Any constant: the same in every test process.
const CLUSTER_SETUP_LOCK = 4_626_101;

/**
 * A fresh database on the server of TEST_DATABASE_URL for one test server, and the way to drop
 * it. On a Citus coordinator it is made a database of the cluster, as docs/citus.md tells an
 * operator: Citus keeps its metadata per database, so the database is made on every worker of the
 * base database with the citus and vector extensions, and the coordinator and workers are added.
 */
export async function freshDatabase(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `orgmem_t_${randomBytes(6).toString('hex')}`;
  const at = (server: string, db: string) => {
    const url = new URL(server);
    url.pathname = `/${db}`;
    return url.toString();
  };
  const servers = [base];
  citus ??= isCitusServer(base);
  const coordinator = new URL(base);
  let workers: { nodename: string; nodeport: number }[] = [];
  if (await citus) {
    const sql = admin(base);
    workers = await sql`select nodename, nodeport from pg_dist_node where groupid <> 0 order by nodeport`;
    await sql.end();
    for (const w of workers) {
      const url = new URL(base);
      url.hostname = w.nodename;
      url.port = String(w.nodeport);
      servers.push(url.toString());
    }
  }
  for (const server of servers) {
    const sql = admin(server);
    await sql.unsafe(`create database ${name}`);
    await sql.end();
    if (!(await citus)) continue;
    const db = admin(at(server, name));
    await db.unsafe(`set client_min_messages = warning; create extension citus; create extension vector`);
    await db.end();
  }
  if (await citus) {
    // Adding a node copies the roles' settings to it, a catalog every database of the node
    // shares: two test files adding nodes at once fail with "tuple concurrently updated", so
    // they take turns (a lock in the base database, which every test file connects to).
    const lock = admin(base);
    await lock`select pg_advisory_lock(${CLUSTER_SETUP_LOCK})`;
    try {
      const db = admin(at(base, name));
      // Four shards a table, where Citus makes 32 by default: the tests need tenants on different
      // shards and nodes, not many shards, and distributing the schema's tables at start, moving
      // shards onto a node added (test/citus.test.ts) and dropping the database all take time
      // with each shard.
      await db.unsafe(`alter database ${name} set citus.shard_count = 4`);
      await db`select citus_set_coordinator_host(${coordinator.hostname}, ${Number(coordinator.port || 5432)})`;
      for (const w of workers) await db`select citus_add_node(${w.nodename}, ${w.nodeport})`;
      await db.end();
    } finally {
      await lock.end();
    }
  }
  return {
    url: at(base, name),
    async drop() {
      for (const server of servers) {
        const sql = admin(server);
        await sql.unsafe(`drop database if exists ${name} with (force)`);
        await sql.end();
      }
    },
  };
}

/**
 * How the embedding column is stored ('p': kept in the row, as sql/007 keeps it) in `memories`
 * and, on a Citus coordinator, in each of its shards: one letter for each.
 */
export async function embeddingStorage(db: Queryable): Promise<string[]> {
  const column = `attrelid = 'memories'::regclass and attname = 'embedding'`;
  const [own] = await db.query<{ storage: string }>(`select attstorage::text as storage from pg_attribute where ${column}`);
  if (!(await db.query(`select 1 from pg_extension where extname = 'citus'`)).length) return [own!.storage];
  const shards = await db.query<{ result: string }>(
    `select result from run_command_on_shards('memories', $$select attstorage from pg_attribute where attrelid = '%s'::regclass and attname = 'embedding'$$)`,
  );
  return [own!.storage, ...shards.map((s) => s.result)];
}

/** Every time column of `memories`, which sql/043 keeps to the millisecond. */
const MEMORY_TIMES = ['created_at', 'updated_at', 'observed_at', 'valid_from', 'valid_to', 'superseded_at', 'expired_at'];

/** Takes the memories' times back to microseconds, as before sql/043, and forgets that migration: the next migrate replays it. */
export async function undoMillisecondTimes(db: Queryable): Promise<void> {
  // Statement by statement: a Citus coordinator sends a distributed table's DDL to its shards as one command each.
  for (const statement of [
    `alter table memories drop column tsv, ${MEMORY_TIMES.map((c) => `alter column ${c} type timestamptz`).join(', ')},
      add column tsv tsvector generated always as (to_tsvector('english', text) || to_tsvector('english', observed_words(observed_at))) stored`,
    'create index memories_tsv on memories using gin (tsv)',
    'delete from schema_migrations where version = 43',
  ])
    await db.exec(statement);
}

/** The types of the memories' time columns, in `memories` and, on a Citus coordinator, in each of its shards: each type once. */
export async function memoryTimeTypes(db: Queryable): Promise<string[]> {
  const own = `select format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = 'memories'::regclass and attname = any($1::text[])`;
  const types = (await db.query<{ type: string }>(own, [MEMORY_TIMES])).map((r) => r.type);
  if ((await db.query(`select 1 from pg_extension where extname = 'citus'`)).length) {
    const columns = MEMORY_TIMES.map((c) => `'${c}'`).join(', ');
    const shards = await db.query<{ result: string }>(
      `select result from run_command_on_shards('memories', $$select string_agg(distinct format_type(atttypid, atttypmod), ',') from pg_attribute
         where attrelid = '%s'::regclass and attname in (${columns})$$)`,
    );
    types.push(...shards.flatMap((s) => s.result.split(',')));
  }
  return [...new Set(types)];
}

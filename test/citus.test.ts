import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable, Tx } from '../src/ports/db/db.ts';
import { CITUS_LOCAL_SCHEMAS, CITUS_TABLES } from '../src/maintenance/citus.ts';
import { migrate } from '../src/maintenance/migrate.ts';
import { CONNECTION_SETTINGS } from '../src/ports/db/postgres.ts';
import { fillGraph } from '../src/services/memory/graph-tenants.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { isCitusServer, memoryTimeTypes, undoMillisecondTimes } from './support/database.ts';
import { startServer, type TestServer } from './support/server.ts';
import { postForm } from './support/transports.ts';
import { until } from './support/until.ts';

// .ci/run sets TEST_CITUS=1 with TEST_DATABASE_URL on the cluster's coordinator
// (scripts/citus-cluster.sh); anywhere else this file is skipped, as its name says.
const CITUS = process.env.TEST_CITUS === '1';
/** The port of an instance with Citus that no database uses yet (scripts/citus-cluster.sh spare); .ci/run sets it. */
const SPARE = process.env.TEST_CITUS_SPARE_PORT;

type Statement = { sql: string; params: unknown[] };

/** Keeps every statement the app's database port runs, transactions included, in `into`. */
function record(db: Queryable & { transaction?: unknown }, into: Statement[]) {
  const keep = <Q extends Queryable>(q: Q): Q => {
    const { query, exec } = q;
    q.query = (async (sql: string, params: unknown[] = []) => {
      into.push({ sql, params });
      return query.call(q, sql, params);
    }) as Q['query'];
    q.exec = async (sql: string) => {
      into.push({ sql, params: [] });
      return exec.call(q, sql);
    };
    return q;
  };
  keep(db);
  const d = db as unknown as { transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> };
  const transaction = d.transaction.bind(d);
  d.transaction = (fn) => transaction((tx) => fn(keep({ ...tx })));
}

/**
 * While `single.on`, every statement of the app runs with Citus refusing a query over more than
 * one shard (citus.multi_task_query_log_level = error, set in the statement's transaction; a
 * statement outside one gets a transaction of its own): a call that succeeds then ran only
 * single-shard statements, each on one node.
 */
function refuseMultiShard(db: Queryable & { transaction?: unknown }, single: { on: boolean }) {
  const refuse = `set local citus.multi_task_query_log_level = 'error'`;
  const d = db as unknown as { transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> };
  const { query, exec } = db;
  const transaction = d.transaction.bind(d);
  db.query = (async (sql: string, params: unknown[] = []) =>
    single.on
      ? transaction(async (tx) => {
          await tx.exec(refuse);
          return tx.query(sql, params);
        })
      : query.call(db, sql, params)) as Queryable['query'];
  db.exec = async (sql: string) =>
    single.on
      ? transaction(async (tx) => {
          await tx.exec(refuse);
          await tx.exec(sql);
        })
      : exec.call(db, sql);
  d.transaction = (fn) =>
    transaction(async (tx) => {
      if (single.on) await tx.exec(refuse);
      return fn(tx);
    });
}

describe.skipIf(!CITUS)('on a Citus coordinator (runs with TEST_CITUS=1 and TEST_DATABASE_URL on the coordinator)', () => {
  let server: TestServer;
  let t: Tenant;
  let sql: postgres.Sql;
  const ran: Statement[] = [];
  const single = { on: false };

  beforeAll(async () => {
    const base = process.env.TEST_DATABASE_URL;
    if (!base || !(await isCitusServer(base))) throw new Error('TEST_CITUS=1 needs TEST_DATABASE_URL on a Citus coordinator (scripts/citus-cluster.sh)');
    // Every search walks the graph, as it does past a few thousand memories.
    server = await startServer({ ORGMEM_SEARCH_EXACT_MAX: '0', ORGMEM_GRAPH_FROM: '0' });
    t = await newTenant(server.url, server.adminKey);
    const texts = Array.from({ length: 60 }, (_, i) => ({
      text: `note ${i} about ${['coffee', 'deploys', 'climbing', 'budgets'][i % 4]} number ${i}`,
      category: i % 2 ? 'fact' : 'episode',
    }));
    expect((await t.api('POST', '/v1/memory/collections/notes/memories/bulk', texts)).status).toBe(201);
    await fillGraph(server.app, t.id);
    // The port's connection settings: the search's statements are replayed as the service runs them.
    sql = postgres((server.app.config as { databaseUrl: string }).databaseUrl, { max: 1, onnotice: () => {}, connection: CONNECTION_SETTINGS });
    // Copies make the collection large enough for the planner to walk the graph rather than sort.
    const columns = (
      await sql<{ name: string }[]>`select column_name as name from information_schema.columns
                                     where table_name = 'memories' and is_generated = 'NEVER' and column_name <> 'id'`
    )
      .map((c) => c.name)
      .join(', ');
    await sql.unsafe(`insert into memories (id, ${columns}) select gen_random_uuid(), ${columns} from memories, generate_series(1, 50) where tenant_id = $1`, [
      t.id,
    ]);
    await sql`analyze memories`;
    record(server.app.db, ran);
    refuseMultiShard(server.app.db, single);
  });

  afterAll(async () => {
    await sql?.end();
    await server?.close();
  });

  it('places every table: distributed on tenant_id and co-located, a reference table, or local for a stated reason', async () => {
    const tables = await sql<{ schema: string; name: string }[]>`
      select n.nspname as schema, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where c.relkind in ('r', 'p') and not c.relispartition and n.nspname not in ('pg_catalog', 'information_schema', 'citus', 'columnar', 'columnar_internal')`;
    const citus = new Map(
      (
        await sql<{ name: string; kind: string; column: string; colocation: number }[]>`
        select table_name::text as name, citus_table_type as kind, distribution_column as column, colocation_id as colocation from citus_tables`
      ).map((r) => [r.name, r]),
    );
    const colocations = new Set<number>();
    for (const { schema, name } of tables) {
      if (schema !== 'public') {
        expect(CITUS_LOCAL_SCHEMAS[schema], `schema ${schema} has no placement`).toEqual(expect.any(String));
        expect(citus.has(`${schema}.${name}`), `${schema}.${name} stays local`).toBe(false);
        continue;
      }
      const placement = CITUS_TABLES[name];
      expect(placement, `table ${name} has no placement in src/maintenance/citus.ts`).toBeDefined();
      const found = citus.get(name);
      if (placement!.kind === 'local') {
        expect(placement!.reason.length).toBeGreaterThan(10);
        expect(found, `${name} stays on the coordinator`).toBeUndefined();
      } else if (placement!.kind === 'reference') {
        expect(found?.kind, name).toBe('reference');
      } else {
        expect(found?.kind, name).toBe('distributed');
        expect(found?.column, name).toBe('tenant_id');
        colocations.add(found!.colocation);
      }
    }
    expect(colocations.size).toBe(1);
    // Every listed table exists: the list holds no table the schema lost.
    expect(Object.keys(CITUS_TABLES).sort()).toEqual(
      tables
        .filter((r) => r.schema === 'public')
        .map((r) => r.name)
        .sort(),
    );
  });

  it('the status answer counts the nodes, all reachable, and the operator metrics list each, up', async () => {
    const expected = await sql<{ host: string; port: number }[]>`select nodename as host, nodeport as port from pg_dist_node where noderole = 'primary'`;
    expect(expected.length).toBeGreaterThanOrEqual(3);
    const status = await t.api('GET', '/v1/status');
    expect(status.status).toBe(200);
    expect(status.body.components.nodes).toEqual({ ok: true, total: expected.length, reachable: expected.length });
    const admin = { Authorization: `Bearer ${server.adminKey}` };
    const metrics = await fetch(`${server.url}/v1/memory/admin/metrics`, { headers: admin }).then((r) => r.json());
    const listed = metrics.citus_nodes as Array<{ host: string; port: number; role: string; active: boolean; reachable: boolean }>;
    expect(listed.map((n) => `${n.host}:${n.port}`).sort()).toEqual(expected.map((n) => `${n.host}:${n.port}`).sort());
    expect(listed.filter((n) => n.role === 'coordinator')).toHaveLength(1);
    expect(listed.every((n) => n.active && n.reachable)).toBe(true);
    const text = await fetch(`${server.url}/v1/memory/admin/metrics/prometheus`, { headers: admin }).then((r) => r.text());
    for (const n of expected)
      expect(text).toMatch(new RegExp(`^orgmem_citus_node_up\\{host="${n.host}",port="${n.port}",role="\\w+",active="true"\\} 1$`, 'm'));
  });

  it('a migration run after the tables were distributed reaches every shard', async () => {
    // An upgrade's path: sql/036 undone by hand and forgotten, then migrate again. Its DDL goes to
    // the shards of a distributed table, which a worker refuses as several commands in one.
    const year = String(new Date().getUTCFullYear());
    const dated = async () => (await sql`select count(*)::int as n from memories where tenant_id = ${t.id} and tsv @@ to_tsquery('english', ${year})`)[0]!.n;
    expect(await dated()).toBeGreaterThan(0);
    await sql`alter table memories drop column tsv`;
    await sql`alter table memories add column tsv tsvector generated always as (to_tsvector('english', text)) stored`;
    await sql`drop function observed_words(timestamptz)`;
    await sql`delete from schema_migrations where version = 36`;
    expect(await dated()).toBe(0);
    const [dim] = await sql<{ value: number }[]>`select value from settings where key = 'embedding_dim'`;
    await migrate(server.app.db, Number(dim!.value), server.app.config.search.vectorIndex);
    expect(await dated()).toBeGreaterThan(0);
    // Every shard has the new column (the tenant's shard is one of them).
    const shards = await sql<{ success: boolean; result: string }[]>`
      select success, result from run_command_on_shards('memories', $$select count(*) from %s where tsv @@ to_tsquery('english', '$$ || ${year} || $$')$$)`;
    expect(shards.length).toBeGreaterThan(1);
    expect(shards.filter((s) => !s.success)).toEqual([]);
    expect(shards.reduce((n, s) => n + Number(s.result), 0)).toBe(await dated());
  });

  it('sql/043 run after the tables were distributed makes the times of every shard millisecond ones, truncated', async () => {
    // An upgrade's path: the times back to microseconds by hand, 043 forgotten, then migrate again.
    await undoMillisecondTimes(server.app.db);
    expect(await memoryTimeTypes(server.app.db)).toEqual(['timestamp with time zone']);
    await sql`update memories set created_at = '2024-03-01 10:00:00.123789+00' where tenant_id = ${t.id}`;
    const [dim] = await sql<{ value: number }[]>`select value from settings where key = 'embedding_dim'`;
    await migrate(server.app.db, Number(dim!.value), server.app.config.search.vectorIndex);
    // The coordinator's table and every shard have the new types, the values truncated, the text search document made again.
    expect(await memoryTimeTypes(server.app.db)).toEqual(['timestamp(3) with time zone']);
    const created = await sql<
      { at: string }[]
    >`select distinct to_char(created_at at time zone 'UTC', 'HH24:MI:SS.US') as at from memories where tenant_id = ${t.id}`;
    expect(created).toEqual([{ at: '10:00:00.123000' }]);
    expect((await sql`select 1 from memories where tenant_id = ${t.id} and tsv @@ to_tsquery('english', 'coffee') limit 1`).length).toBe(1);
    // The rewrite dropped the statistics of the changed columns: the plans the tests below check need them.
    await sql`analyze memories`;
  });

  it('a memory written alone and in bulk, a remember, a file drop, hygiene and all-collection search of one tenant run only single-shard statements', async () => {
    single.on = true;
    try {
      // The check bites: a statement over every tenant's shards is refused.
      await expect(server.app.db.query('select count(*) from memories')).rejects.toThrow(/multi-task/);
      await expect(server.app.db.transaction((tx) => tx.query('select count(*) from memories'))).rejects.toThrow(/multi-task/);
      const one = await t.api('POST', '/v1/memory/collections/routed/memories', { text: 'one memory, one shard' });
      expect(one.status).toBe(201);
      const bulk = await t.api('POST', '/v1/memory/collections/routed/memories/bulk', [{ text: 'bulk one' }, { text: 'bulk two' }, { text: 'bulk three' }]);
      expect(bulk.status).toBe(201);
      const remembered = await t.api('POST', '/v1/memory/collections/routed/remember', { content: 'Ada keeps bees.' });
      expect(remembered.status).toBe(202);
      const file = { filename: 'note.txt', content_type: 'text/plain', data: Buffer.from('the routed file says the ferry leaves at nine').toString('base64') };
      const dropped = await postForm(server.url, t.key, '/v1/memory/collections/routed/drop', { files: [file] });
      expect(dropped.status).toBe(201);
      expect(dropped.body).toMatchObject({ stored: 1, failed: 0 });
      // Hygiene, done and dry runs, the collection's health, and search of every collection.
      await t.api('POST', '/v1/memory/collections/routed/memories', { text: 'bulk one' });
      for (const dry_run of [true, false]) {
        const dedup = await t.api('POST', '/v1/memory/collections/routed/dedup', { threshold: 0.99, dry_run });
        expect(dedup.status, JSON.stringify(dedup.body)).toBe(200);
        const stale = await t.api('POST', '/v1/memory/collections/routed/archive-stale', { older_than_days: 0, dry_run });
        expect(stale.status, JSON.stringify(stale.body)).toBe(200);
      }
      expect((await t.api('GET', '/v1/memory/collections/routed/health')).status).toBe(200);
      const all = await t.api('POST', '/v1/memory/search', { query: 'ferry', mode: 'hybrid', min_score: 0 });
      expect(all.status, JSON.stringify(all.body)).toBe(200);
    } finally {
      single.on = false;
    }
    const texts = (await t.api('GET', '/v1/memory/collections/routed/memories?include_archived=true&limit=50')).body.map((m: { text: string }) => m.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        'one memory, one shard',
        'bulk one',
        'bulk two',
        'bulk three',
        'Ada keeps bees.',
        expect.stringContaining('ferry leaves at nine'),
      ]),
    );
  });

  // The search statement the app ran, EXPLAINed (ANALYZE: the worker plans and runs it) in the
  // transaction the app ran it in, after the settings statements it sent before it.
  async function explainSearch(body: Record<string, unknown>) {
    ran.length = 0;
    const res = await t.api('POST', '/v1/memory/collections/notes/search', { min_score: 0, ...body });
    expect(res.status).toBe(200);
    expect(res.body.results.length).toBeGreaterThan(0);
    // The float graph's order or the binary one's (the default storage: docs/vectors.md).
    const at = ran.findIndex((s) => /order by (m\.embedding <=>|binary_quantize\(m\.embedding\))/.test(s.sql));
    expect(at, 'the search walked the HNSW graph').toBeGreaterThanOrEqual(0);
    const settings = ran.slice(0, at).filter((s) => /^set local/i.test(s.sql.trim()));
    return sql.begin(async (tx) => {
      for (const s of settings) await tx.unsafe(s.sql).simple();
      const [plan] = await tx.unsafe(`explain (analyze, verbose, format json) ${ran[at]!.sql}`, ran[at]!.params as never[]);
      // The setting the worker running the shard's query sees, in the same transaction.
      const [seen] = await tx.unsafe<{ ef: string }[]>(`select current_setting('hnsw.ef_search') as ef from memories where tenant_id = $1 limit 1`, [t.id]);
      if (process.env.SHOW_PLAN) console.log(JSON.stringify(plan, null, 1));
      return { plan: JSON.stringify(plan), ef: seen!.ef, settings };
    });
  }

  it('an unfiltered search is one task on one worker, walking the HNSW index with its ef_search there', async () => {
    const { plan } = await explainSearch({ query: 'coffee', mode: 'vector', limit: 5 });
    expect(plan).toMatch(/"Task Count":1,/);
    expect(plan.match(/"Node":"host=[^"]+"/g)).toHaveLength(1);
    expect(plan).toMatch(/"Index Name":"memories_embedding_\d+"/);
    // The settings are part of the shard's statement: the worker evaluates them.
    expect(plan).toMatch(/set_config\('hnsw\.ef_search'/);
  });

  it('a filtered search sends its SET LOCAL settings to the worker and walks the HNSW index there', async () => {
    const { plan, ef, settings } = await explainSearch({ query: 'coffee', mode: 'vector', category: 'fact', limit: 50 });
    expect(settings.length).toBeGreaterThan(0);
    expect(plan).toMatch(/"Task Count":1,/);
    expect(plan.match(/"Node":"host=[^"]+"/g)).toHaveLength(1);
    expect(plan).toMatch(/"Index Name":"memories_embedding_\d+"/);
    // The search's value, not the worker's own: the search's SET LOCAL reached the worker.
    const [own] = await sql<{ ef: string }[]>`select current_setting('hnsw.ef_search') as ef from memories where tenant_id = ${t.id} limit 1`;
    expect(ef).not.toBe(own!.ef);
    expect(ef).toBe(/hnsw\.ef_search = (\d+)/.exec(settings.map((s) => s.sql).join(';'))![1]);
  });

  /**
   * The spare instance (scripts/citus-cluster.sh spare) joined to this test's database alone, as
   * docs/citus.md adds a worker (the database and both extensions made on it first), so stopping
   * it touches no other test's. `leave` takes it out again: its shards moved back, the node
   * removed, its copy of the database dropped.
   */
  async function joinSpare(coordinator: postgres.Sql) {
    const port = Number(SPARE);
    const name = new URL((server.app.config as { databaseUrl: string }).databaseUrl).pathname.slice(1);
    const on = (db: string) => {
      const url = new URL(process.env.TEST_DATABASE_URL!);
      url.port = String(port);
      url.pathname = `/${db}`;
      return postgres(url.toString(), { max: 1, onnotice: () => {} });
    };
    const node = on('postgres');
    await node.unsafe(`create database ${name}`);
    await node.end();
    const onSpare = on(name);
    await onSpare.unsafe('set client_min_messages = warning; create extension citus; create extension vector');
    await onSpare.end();
    await coordinator`select citus_add_node('127.0.0.1', ${port})`;
    return {
      port,
      cluster: `citus${port}`,
      /** `coordinator`: a session opened after the node last stopped (an older one's connection to it died with it). */
      async leave(coordinator: postgres.Sql) {
        await coordinator`select citus_drain_node('127.0.0.1', ${port}, shard_transfer_mode => 'block_writes')`;
        // A move leaves its source shard to be dropped later: dropped now, while the node is there
        // (a record left for a removed node made a later move onto the same address fail for ever).
        await coordinator`call citus_cleanup_orphaned_resources()`;
        await coordinator`select citus_remove_node('127.0.0.1', ${port})`;
        const drop = on('postgres');
        await drop.unsafe(`drop database if exists ${name} with (force)`);
        await drop.end();
      },
    };
  }

  it.skipIf(!SPARE)(
    'a worker added and the shards rebalanced onto it (block_writes) while requests run: every answer a success, every write there',
    async () => {
      const cluster = postgres((server.app.config as { databaseUrl: string }).databaseUrl, { max: 1, onnotice: () => {} });
      const node = await joinSpare(cluster);
      try {
        // The rebalancer's plan names the shards it moves: a tenant on one of them writes while its
        // shard moves (each new tenant lands on one at random). Counted by shards, the plan moves a
        // whole quarter of the hash space onto the empty node; by disk size (Citus's default) it
        // changes as the tenants write and may move none.
        const strategy = 'by_shard_count';
        const moves = async (who: Tenant) =>
          (
            await cluster`select 1 from get_rebalance_table_shards_plan(rebalance_strategy => ${strategy}) p
                           where p.shardid = get_shard_id_for_distribution_column(p.table_name, ${who.id}::uuid)`
          ).length > 0;
        let moving = await newTenant(server.url, server.adminKey);
        for (let i = 0; i < 40 && !(await moves(moving)); i++) moving = await newTenant(server.url, server.adminKey);
        expect(await moves(moving), 'a tenant on a shard the rebalance moves').toBe(true);
        let running = true;
        const failed: string[] = [];
        const written = new Map<Tenant, string[]>([
          [moving, []],
          [t, []],
        ]);
        const loop = async (who: Tenant) => {
          for (let i = 0; running; i++) {
            const text = `written while the shards move, number ${i}`;
            const created = await who.api('POST', '/v1/memory/collections/moving/memories', { text });
            if (created.status === 201) written.get(who)!.push(text);
            else failed.push(`create ${created.status} ${JSON.stringify(created.body)}`);
            const found = await who.api('POST', '/v1/memory/collections/moving/search', { query: text, mode: 'text' });
            if (found.status !== 200) failed.push(`search ${found.status} ${JSON.stringify(found.body)}`);
          }
        };
        const loops = [...written.keys()].map(loop);
        try {
          const [job] = await cluster<
            { id: string }[]
          >`select citus_rebalance_start(rebalance_strategy => ${strategy}, shard_transfer_mode => 'block_writes')::text as id`;
          await cluster`select citus_rebalance_wait()`;
          const [status] = await cluster<{ state: string }[]>`select state::text from citus_rebalance_status() where job_id = ${job!.id}`;
          expect(status!.state).toBe('finished');
        } finally {
          running = false;
          await Promise.all(loops);
        }
        const [placed] = await cluster<{ port: number }[]>`
        select nodeport as port from citus_shards where table_name = 'collections'::regclass
           and shardid = get_shard_id_for_distribution_column('collections', ${moving.id}::uuid)`;
        expect(placed!.port).toBe(node.port);
        expect(failed).toEqual([]);
        for (const [who, texts] of written) {
          expect(texts.length).toBeGreaterThan(0);
          const stored: string[] = [];
          for (let offset = 0; ; offset += 200) {
            const page = await who.api('GET', `/v1/memory/collections/moving/memories?limit=200&offset=${offset}`);
            expect(page.status).toBe(200);
            stored.push(...page.body.map((m: { text: string }) => m.text));
            if (page.body.length < 200) break;
          }
          expect(stored.sort()).toEqual([...texts].sort());
        }
      } finally {
        await node.leave(cluster);
        await cluster.end();
      }
    },
    120_000,
  );

  it.skipIf(!SPARE)(
    'a tenant isolated and moved to a node of its own answers 503 while that node is down, others are served, and all recover',
    async () => {
      const other = await newTenant(server.url, server.adminKey);
      expect((await other.api('POST', '/v1/memory/collections/notes/memories', { text: 'the isolated tenant keeps this' })).status).toBe(201);
      const node = await joinSpare(sql);
      const spare = node.port;
      const [isolated] = await sql<
        { shard: string }[]
      >`select isolate_tenant_to_new_shard('collections', ${other.id}::uuid, 'CASCADE', 'block_writes') as shard`;
      const shard = isolated!.shard;
      const [from] = await sql<{ nodename: string; nodeport: number }[]>`select nodename, nodeport from citus_shards where shardid = ${shard}`;
      await sql`select citus_move_shard_placement(${shard}, ${from!.nodename}, ${from!.nodeport}, '127.0.0.1', ${spare}, 'block_writes')`;
      const list = (who: Tenant) => who.api('GET', '/v1/memory/collections/notes/memories');
      expect((await list(other)).body.map((m: { text: string }) => m.text)).toEqual(['the isolated tenant keeps this']);
      const cluster = node.cluster;
      execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', '15', cluster, 'stop', '-m', 'fast']);
      try {
        const down = await list(other);
        expect(down.status).toBe(503);
        expect(down.body.detail).toMatch(/A database cannot be reached now/);
        expect((await other.api('POST', '/v1/memory/collections/notes/memories', { text: 'not while its node is down' })).status).toBe(503);
        expect((await list(t)).status).toBe(200);
        expect((await t.api('POST', '/v1/memory/collections/notes/memories', { text: 'written while another node is down' })).status).toBe(201);
        // A process starting now migrates first: with nothing to change, it sends nothing to the nodes.
        await expect(migrate(server.app.db, server.app.embedder.dimensions, server.app.config.search.vectorIndex)).resolves.toBeUndefined();
      } finally {
        execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', '15', cluster, 'start']);
      }
      const back = await until('the isolated tenant served again', async () => {
        const res = await list(other);
        return res.status === 200 ? res : undefined;
      });
      expect(back.body.map((m: { text: string }) => m.text)).toEqual(['the isolated tenant keeps this']);
      // Its node back, the tenant leaves it before the test's database goes.
      const after = postgres((server.app.config as { databaseUrl: string }).databaseUrl, { max: 1, onnotice: () => {} });
      await node.leave(after);
      await after.end();
    },
    120_000,
  );
});

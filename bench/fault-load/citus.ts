import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { at } from '../lib/server.ts';

/**
 * The faults of the run on a Citus cluster (docs/citus.md, "Operating the cluster"), on the
 * instances scripts/citus-cluster.sh makes (PostgreSQL 15 cluster `citus<port>` for each port):
 *
 * - a worker stopped (`pg_ctlcluster stop -m fast`) for a while and started again: the one
 *   holding the most of the run's tenants, but not all of them, so some tenants lose their node
 *   and others must not notice;
 * - a worker added (the spare instance, joined to the bench's database) and the shards
 *   rebalanced onto it in the background with `block_writes` (logical replication is not
 *   available on the project's Citus build), while the load runs.
 */
export interface Rebalance {
  node: number;
  job: string;
  state: string;
  /** Shard groups moved (the job's tasks that ended done), and its tasks in all. */
  moved: number;
  tasks: number;
  seconds: number;
}

export interface Outage {
  node: number;
  /** The tenants whose shards the stopped node held when it stopped. */
  tenants: Set<string>;
  stoppedAt: number;
  startedAt: number;
}

const cluster = (port: number) => `citus${port}`;
const pgCtl = (port: number, action: 'stop' | 'start') =>
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', '15', cluster(port), action, ...(action === 'stop' ? ['-m', 'fast'] : [])], { stdio: 'pipe' });

/** Where each tenant's shards are now: tenant id -> worker port. */
export async function tenantNodes(sql: postgres.Sql, tenants: string[]): Promise<Map<string, number>> {
  const rows = await sql<{ tenant: string; port: number }[]>`
    select t.id::text as tenant, s.nodeport as port from unnest(${tenants}::uuid[]) as t(id)
      join citus_shards s on s.table_name = 'collections'::regclass and s.shardid = get_shard_id_for_distribution_column('collections', t.id)`;
  return new Map(rows.map((r) => [r.tenant, r.port]));
}

/**
 * Makes sure the tenants are not all on one worker (their ids are random; six of them all hashed
 * to one node's shards in one run of eight): if they are, the last one's shard group is moved to
 * another worker (block_writes), before the load, so that a stop leaves some tenants up.
 */
export async function spreadTenants(url: string, tenants: string[]): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const where = await tenantNodes(sql, tenants);
    const used = new Set(where.values());
    if (used.size > 1) return;
    const [from] = used;
    const [to] = await sql<{ port: number; host: string }[]>`
      select nodeport as port, nodename as host from pg_dist_node where groupid <> 0 and isactive and nodeport <> ${from!} order by nodeport limit 1`;
    if (!to) return;
    const last = tenants.at(-1)!;
    await sql`select citus_move_shard_placement(get_shard_id_for_distribution_column('collections', ${last}::uuid),
                                                ${new URL(url).hostname}, ${from!}, ${to.host}, ${to.port}, 'block_writes')`;
  } finally {
    await sql.end();
  }
}

/**
 * Joins the instance on `port` to the database of `url` (the database and both extensions made
 * on it first, as on any worker) and moves shards onto it with citus_rebalance_start, waiting
 * for the job to end.
 */
export async function addNodeAndRebalance(url: string, port: number): Promise<Rebalance> {
  const node = new URL(url);
  node.port = String(port);
  const admin = postgres(at(node.toString(), 'postgres'), { max: 1, onnotice: () => {} });
  const name = node.pathname.slice(1);
  if (!(await admin`select 1 from pg_database where datname = ${name}`).length) await admin.unsafe(`create database ${name}`);
  await admin.end();
  const db = postgres(node.toString(), { max: 1, onnotice: () => {} });
  await db.unsafe('set client_min_messages = warning; create extension if not exists citus; create extension if not exists vector');
  await db.end();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const started = Date.now();
    await sql`select citus_add_node(${node.hostname}, ${port})`;
    const [job] = await sql<{ id: string | null }[]>`select citus_rebalance_start(shard_transfer_mode => 'block_writes')::text as id`;
    if (!job!.id) return { node: port, job: 'none', state: 'nothing to move', moved: 0, tasks: 0, seconds: (Date.now() - started) / 1000 };
    await sql`select citus_rebalance_wait()`;
    const [status] = await sql<{ state: string }[]>`select state::text from citus_rebalance_status() where job_id = ${job!.id}`;
    const [tasks] = await sql<{ done: number; all: number }[]>`
      select count(*) filter (where status = 'done')::int as done, count(*)::int as all from pg_dist_background_task where job_id = ${job!.id}`;
    return { node: port, job: job!.id, state: status!.state, moved: tasks!.done, tasks: tasks!.all, seconds: (Date.now() - started) / 1000 };
  } finally {
    await sql.end();
  }
}

/**
 * Stops for `seconds` the worker holding the most of `tenants` without holding them all (none
 * if every tenant is on one node), then starts it again and waits until it accepts connections.
 */
export async function stopWorker(url: string, tenants: string[], seconds: number): Promise<Outage | null> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const where = await tenantNodes(sql, tenants).finally(() => sql.end());
  const count = new Map<number, number>();
  for (const port of where.values()) count.set(port, (count.get(port) ?? 0) + 1);
  const [node] = [...count].filter(([, n]) => n < tenants.length).sort((a, b) => b[1] - a[1])[0] ?? [];
  if (node === undefined) return null;
  const outage: Outage = { node, tenants: new Set([...where].filter(([, p]) => p === node).map(([t]) => t)), stoppedAt: Date.now(), startedAt: 0 };
  pgCtl(node, 'stop');
  try {
    await new Promise((r) => setTimeout(r, seconds * 1000));
  } finally {
    startWorker(node);
  }
  outage.startedAt = Date.now();
  return outage;
}

/** Starts the instance on `port` if it is stopped (after a run cut short while it was down, too). */
export function startWorker(port: number): void {
  const online = execFileSync('pg_lsclusters', ['-h'], { encoding: 'utf8' })
    .split('\n')
    .some((l) => l.split(/\s+/)[1] === cluster(port) && l.split(/\s+/)[3] === 'online');
  if (!online) pgCtl(port, 'start');
}

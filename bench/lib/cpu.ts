import { readdirSync, readFileSync } from 'node:fs';
import type { Sql } from 'postgres';

/**
 * A process's CPU seconds so far, all its threads, from /proc (Linux): on a shared machine, CPU
 * per unit of work says more than the wall clock about what a run costs.
 */
export const processCpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 10 ms
};

/**
 * The whole machine's busy CPU seconds so far (every core; idle and I/O wait left out): with a
 * server's own, it tells what the other processes (PostgreSQL's backends) spent.
 */
export const machineCpuSeconds = () => {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number) as number[];
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
};

/**
 * The CPU seconds so far of each PostgreSQL backend connected to the database of `sql` (servers on
 * this machine; several on a Citus cluster, the coordinator and each worker): what the statements
 * of one run cost there, apart from other databases' work.
 */
export async function backendCpuSeconds(sql: Sql | Sql[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const pid of await backendPids(sql)) {
    try {
      out.set(pid, processCpuSeconds(pid));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** The backends' CPU seconds between two readings (a backend started in between counts from zero). */
export const backendCpuSince = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, s]) => sum + s - (before.get(pid) ?? 0), 0);

/** The PostgreSQL backends connected to the database of `sql` (of each). */
export async function backendPids(sql: Sql | Sql[]): Promise<number[]> {
  const pids = [];
  for (const s of [sql].flat())
    pids.push(...(await s<Array<{ pid: number }>>`select pid from pg_stat_activity where datname = current_database()`).map((r) => r.pid));
  return pids;
}

/**
 * The CPU seconds so far of a whole PostgreSQL instance on this machine (the one `sql` is
 * connected to): its postmaster's own, its live children's (backends, background workers), and
 * those of the children that have exited (the postmaster's reaped-children time), so connections
 * closed during a run count too. For a server no other database's work runs on (a Citus node of
 * scripts/citus-cluster.sh while a benchmark has the cluster to itself).
 */
export async function instanceCpuSeconds(sql: Sql): Promise<number> {
  const [{ dir }] = await sql<[{ dir: string }]>`select current_setting('data_directory') as dir`;
  const postmaster = Number(readFileSync(`${dir}/postmaster.pid`, 'utf8').split('\n')[0]);
  const fields = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const own = fields(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]); // utime stime cutime cstime
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = fields(Number(entry));
      if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // ended meanwhile
    }
  }
  return ticks / 100;
}

import { readFileSync } from 'node:fs';
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
  for (const s of [sql].flat()) pids.push(...(await s<Array<{ pid: number }>>`select pid from pg_stat_activity where datname = current_database()`).map((r) => r.pid));
  return pids;
}

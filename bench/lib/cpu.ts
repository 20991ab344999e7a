import { readFileSync } from 'node:fs';

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

/**
 * How a process's workers are shared, so that no tenant and no kind of slow work can hold them all
 * (docs/architecture.md, "Jobs"). Every job carries flags naming its tenant (the payload's
 * `tenant_id`), its lane and the pair; before each take a worker asks which flags are at their
 * cap, and the queue skips the jobs that carry one.
 *
 * - A lane is a kind of long job: what waits on something outside the service, or (`graph`) a
 *   tenant's graph fill, a loop of HNSW inserts. `webhook` (a tenant's receiver) holds at most
 *   half of the workers; every other lane all but one (one is always left for other kinds of job).
 *   A tenant runs one job of a lane at a time: its slow endpoint, or its fill, holds one worker.
 * - A tenant holds at most all but one worker, whatever its jobs are.
 *
 * The counts are this process's: each worker process keeps its own share, and the tenant's backlog
 * ordering (`backlogPriority`) makes the order fair across processes.
 */
export const LANES = ['webhook', 'llm', 'import', 'sync', 'graph'] as const;
export type Lane = (typeof LANES)[number];

/** The flags a job of `tenant` in `lane` carries; none for a job of no tenant and no lane. */
export function shareFlags(tenant: string | null, lane: Lane | undefined): string[] {
  return [...(tenant ? [`tenant:${tenant}`] : []), ...(lane ? [`lane:${lane}`] : []), ...(tenant && lane ? [`tenant-lane:${tenant}:${lane}`] : [])];
}

/** A job's tenant: the payload's `tenant_id`, when it has one. */
export const jobTenant = (payload: unknown): string | null => {
  const id = (payload as { tenant_id?: unknown } | null)?.tenant_id;
  return typeof id === 'string' ? id : null;
};

/**
 * A waiting job's place in the order: how many jobs of its tenant wait before it, so that the
 * queue, which takes the lowest first, takes one job of each tenant in turn (the tenant's first
 * waiting job, then everyone's second...) instead of one tenant's whole backlog first. Counted up
 * to this bound (the column is a smallint on graphile-worker).
 */
export const BACKLOG_BOUND = 10_000;

/**
 * On the embedded runner a job's place also ages: it is taken as if it had been queued this many
 * seconds later per job of its tenant before it. A tenant whose job came behind a backlog is
 * then served within that many seconds per place even while others keep queuing first places;
 * ordered by place alone, such a job waited for the next `rebalance` (a minute) whenever the
 * workers were saturated (bench/README.md, "Noisy neighbours").
 */
export const PLACE_SECONDS = 1;

export function capOf(flag: string, concurrency: number): number {
  if (flag.startsWith('tenant-lane:')) return 1;
  if (flag === 'lane:webhook') return Math.max(1, Math.floor(concurrency / 2));
  return Math.max(1, concurrency - 1);
}

/** The running jobs of one process by flag, and the flags at their cap. */
export class WorkerShares {
  private readonly running = new Map<string, number>();
  constructor(private readonly concurrency: number) {}

  /** The flags whose jobs the next take must skip. */
  forbidden(): string[] {
    return [...this.running].filter(([flag, n]) => n >= capOf(flag, this.concurrency)).map(([flag]) => flag);
  }

  started(flags: readonly string[]): void {
    for (const f of flags) this.running.set(f, (this.running.get(f) ?? 0) + 1);
  }

  finished(flags: readonly string[]): void {
    for (const f of flags) {
      const n = (this.running.get(f) ?? 0) - 1;
      if (n > 0) this.running.set(f, n);
      else this.running.delete(f);
    }
  }
}

/**
 * One take at a time in a process: a worker's cap check and its take are one step, so two idle
 * workers woken together cannot both take the last job a cap allows. A holder that never hands
 * back (a take that died) is passed over after `maxWaitMs`.
 */
export class TakeTurn {
  private current: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;
  constructor(private readonly maxWaitMs = 5_000) {}

  async acquire(): Promise<void> {
    const previous = this.current;
    let release!: () => void;
    this.current = new Promise<void>((resolve) => (release = resolve));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([previous, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.maxWaitMs)))]);
    clearTimeout(timer);
    this.release = release;
  }

  done(): void {
    this.release?.();
    this.release = null;
  }
}

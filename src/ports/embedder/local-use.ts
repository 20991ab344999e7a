import { availableParallelism } from 'node:os';
import { microBatcher, type MicroBatcher } from './batcher.ts';
import type { Embedder } from './embedder.ts';
import { ModelThread } from './model-threads.ts';

/** The process's model threads and the batcher in front of them: one set, whatever the number of apps. */
let pool: Pool | undefined;
interface Pool {
  threads: ModelThread[];
  batcher: MicroBatcher;
  closed: boolean;
}

function openPool(size: number): Pool {
  const threads = Array.from({ length: size }, () => new ModelThread());
  const opened: Pool = {
    threads,
    closed: false,
    batcher: microBatcher({
      // 32 is where throughput stops improving (dependency check: 98/s at 32, 96/s at 64).
      maxBatch: 32,
      slots: size,
      run: async (texts, slot) => {
        // Calls still queued when the pool closed fail rather than start threads nobody closes.
        if (opened.closed) throw new Error('local embedder closed');
        // A thread that died (crash, or closed while the app goes on) is replaced on next use.
        if (threads[slot]!.dead) threads[slot] = new ModelThread();
        return threads[slot]!.embed(texts);
      },
    }),
  };
  return opened;
}

/**
 * The bundled Universal Sentence Encoder lite (512-d, Apache-2.0): weights ship inside the npm
 * package, so the embedded default needs no network. The first call starts the model threads,
 * which load the model (`orgmem serve` and `worker` make that call at start, so a first request
 * does not wait for the load; a command that never embeds never pays for it); concurrent calls
 * share model calls (batcher.ts).
 */
export function localUseEmbedder(opts: { threads?: number } = {}): Embedder {
  const size = opts.threads || defaultThreads();
  return {
    name: 'local Universal Sentence Encoder lite (512-d)',
    dimensions: 512,
    // Opened on first use, and again after closeLocalEmbedder.
    embed: (texts) => (pool ??= openPool(size)).batcher.embed(texts),
  };
}

/** One thread a core, at most 4: past the cores, threads only take turns (and each holds the model, about 170 MB). */
function defaultThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** Ends the model threads (closeApp); calls waiting on them fail. */
export async function closeLocalEmbedder(): Promise<void> {
  const open = pool;
  pool = undefined;
  if (open) open.closed = true;
  await Promise.all(open?.threads.map((t) => t.close()) ?? []);
}

/**
 * Coalesces concurrent embed calls into shared model calls. A model call costs less per text in a
 * batch than alone (USE-lite on one core: 81 texts/s one at a time, 98 at 32 in the dependency
 * check; 44 and 55 to 65 per CPU-second on a loaded machine), and requests arrive one or a hundred
 * texts at a time: so texts from every caller wait in one queue, and each free slot (a model
 * thread) takes up to `maxBatch` of them at once.
 *
 * There is no timer: a text waits only while every slot is busy, so a lone query is embedded at
 * once, and the batches grow by themselves with the load (bounded by `maxBatch`). Calls of one
 * text (a search's query, a single write) go ahead of longer ones: a search during a bulk load
 * waits for the model calls in progress, not for the load's backlog of hundreds of texts.
 */
export interface MicroBatcher {
  embed(texts: string[]): Promise<number[][]>;
}

/** One caller's request: its texts, the vectors filled in as batches finish, and how many are still out. */
interface Call {
  texts: string[];
  next: number;
  vectors: number[][];
  outstanding: number;
  failed: boolean;
  resolve(vectors: number[][]): void;
  reject(err: unknown): void;
}

export function microBatcher(opts: {
  /** Texts per model call at most. */
  maxBatch: number;
  /** Model calls in flight at once (one per worker thread); `run` is told which slot it runs in. */
  slots: number;
  run(texts: string[], slot: number): Promise<number[][]>;
}): MicroBatcher {
  const single: Call[] = [];
  const queue: Call[] = [];
  const free = Array.from({ length: opts.slots }, (_, i) => i);

  const dispatch = () => {
    while (free.length && (single.length || queue.length)) {
      const slot = free.pop()!;
      // Single-text calls first, then the oldest longer calls: no caller waits behind a later one of its kind.
      const parts: Array<{ call: Call; start: number; count: number }> = [];
      let size = 0;
      while (size < opts.maxBatch && (single.length || queue.length)) {
        const waiting = single.length ? single : queue;
        const call = waiting[0]!;
        const count = Math.min(opts.maxBatch - size, call.texts.length - call.next);
        parts.push({ call, start: call.next, count });
        call.next += count;
        call.outstanding++;
        size += count;
        if (call.next === call.texts.length) waiting.shift();
      }
      const texts = parts.flatMap((p) => p.call.texts.slice(p.start, p.start + p.count));
      opts
        .run(texts, slot)
        .then((vectors) => {
          if (vectors.length !== texts.length) throw new Error(`embedder returned ${vectors.length} vectors for ${texts.length} texts`);
          let offset = 0;
          for (const p of parts) {
            for (let i = 0; i < p.count; i++) p.call.vectors[p.start + i] = vectors[offset + i]!;
            offset += p.count;
            if (--p.call.outstanding === 0 && p.call.next === p.call.texts.length && !p.call.failed) p.call.resolve(p.call.vectors);
          }
        })
        .catch((err: unknown) => {
          // Every caller with a text in the failed batch gets the error; the rest of a failed
          // caller's texts are dropped from the queue, since nobody waits for them any more (a
          // single-text call is never left there in part).
          for (const p of parts) {
            if (p.call.failed) continue;
            p.call.failed = true;
            const i = queue.indexOf(p.call);
            if (i >= 0) queue.splice(i, 1);
            p.call.reject(err);
          }
        })
        .finally(() => {
          free.push(slot);
          dispatch();
        });
    }
  };

  return {
    embed(texts) {
      if (!texts.length) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        (texts.length === 1 ? single : queue).push({ texts, next: 0, vectors: new Array(texts.length), outstanding: 0, failed: false, resolve, reject });
        dispatch();
      });
    },
  };
}

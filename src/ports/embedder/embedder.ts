export interface Embedder {
  /** Short description for logs and errors, e.g. "local USE-lite (512-d)". */
  readonly name: string;
  readonly dimensions: number;
  /**
   * Set by the hash embedder, which computes in the calling thread: its dimensions, so that a
   * file's chunks are hashed in the files service's runner rather than on the event loop
   * (src/services/files/parse-runner.ts). The other embedders compute elsewhere already (the
   * bundled model in its threads, an endpoint on its server).
   */
  readonly hashed?: { dimensions: number };
  /** One vector per text, in input order. Implementations batch internally. */
  embed(texts: string[]): Promise<number[][]>;
}

/** Splits work into batches so one huge request never goes to a model at once. */
export async function inBatches<T, R>(items: T[], size: number, fn: (batch: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await fn(items.slice(i, i + size))));
  return out;
}

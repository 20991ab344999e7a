export interface Embedder {
  /** Short description for logs and errors, e.g. "local USE-lite (512-d)". */
  readonly name: string;
  readonly dimensions: number;
  /** One vector per text, in input order. Implementations batch internally. */
  embed(texts: string[]): Promise<number[][]>;
}

/** Splits work into batches so one huge request never goes to a model at once. */
export async function inBatches<T, R>(items: T[], size: number, fn: (batch: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await fn(items.slice(i, i + size))));
  return out;
}

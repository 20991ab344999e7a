import { memories } from '../search/corpus.ts';
import { api } from './server.ts';
import { pool } from './stats.ts';

/** A collection to fill: `count` memories of the synthetic corpus (search/corpus.ts) from `seed`. */
export interface LoadSet {
  collection: string;
  count: number;
  seed: number;
}

/**
 * Loads the sets through the REST bulk endpoint, 100 memories a call, `concurrency` calls in
 * flight, logging the progress every 30 s; answers the seconds it took.
 */
export async function bulkLoad(url: string, key: string, sets: LoadSet[], concurrency: number, log: (msg: string) => void): Promise<number> {
  const batches: Array<{ collection: string; items: unknown[] }> = [];
  for (const { collection, count, seed } of sets) {
    let items: unknown[] = [];
    for (const m of memories(count, seed)) {
      items.push(m);
      if (items.length === 100) {
        batches.push({ collection, items });
        items = [];
      }
    }
    if (items.length) batches.push({ collection, items });
  }
  const total = sets.reduce((sum, s) => sum + s.count, 0);
  const started = performance.now();
  let done = 0;
  let lastReport = started;
  await pool(batches, concurrency, async (b) => {
    const res = await api(url, key, 'POST', `/v1/memory/collections/${b.collection}/memories/bulk`, b.items);
    if (res.status !== 201) throw new Error(`bulk insert: ${res.status} ${JSON.stringify(res.body)}`);
    done += b.items.length;
    if (performance.now() - lastReport > 30_000) {
      lastReport = performance.now();
      log(`${done}/${total} (${Math.round(done / ((lastReport - started) / 1000))}/s)`);
    }
  });
  return (performance.now() - started) / 1000;
}

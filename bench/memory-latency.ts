/**
 * The machine's memory latency: one dependent random read after another over 1 GiB, the access
 * pattern of an HNSW graph walk and of shared-buffer lookups. Search latency at 1M memories
 * follows it closely, so the benchmark tables in README and docs/search.md say what this printed
 * on the machine that measured them; compare it before comparing search numbers across machines.
 *
 *   node --import tsx bench/memory-latency.ts
 */
import { rng } from './lib/stats.ts';

const N = 1 << 28; // 2^28 four-byte slots: 1 GiB, far beyond any CPU cache
const READS = 5_000_000;

// Sattolo's shuffle makes one cycle through every slot, so the walk never settles into a cached loop.
const next = new Uint32Array(N);
for (let i = 0; i < N; i++) next[i] = i;
const random = rng(1);
for (let i = N - 1; i > 0; i--) {
  const j = random.int(i);
  [next[i], next[j]] = [next[j]!, next[i]!];
}

const best = Array.from({ length: 3 }, () => {
  let p = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < READS; i++) p = next[p]!;
  const ns = Number(process.hrtime.bigint() - started) / READS;
  if (p === N) throw new Error('unreachable: keeps the walk from being optimised away');
  return ns;
}).sort((a, b) => a - b)[0]!;

console.log(JSON.stringify({ random_read_ns: Math.round(best), bytes: N * 4, reads: READS }));

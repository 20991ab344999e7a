/**
 * The pairs of vectors at least `floor` alike (cosine), without comparing every two: random
 * hyperplane hashing (docs/consolidation.md, "Finding near-duplicates"). Each vector gets TABLES
 * keys of BITS signs of its projections on random directions; only vectors sharing a key in some
 * table are compared exactly. Two vectors at angle θ share a key with probability (1 - θ/π)^BITS,
 * so at cosine 0.9 a pair is compared with probability 0.996 over 16 tables, at 0.75 with 0.88:
 * the rare pair missed is a proposal not made, never a wrong one. The directions come from a fixed
 * seed, so a run over the same memories proposes the same changes.
 */
export interface Pair {
  a: string;
  b: string;
  similarity: number;
}

const TABLES = 16;
const BITS = 8;
/** A bucket larger than this (many vectors alike in every sign) is compared in windows of it. */
const BUCKET_MAX = 256;
/** The longest the loop holds the event loop before it lets the process's requests and heartbeats run. */
const SLICE_MS = 20;

export async function nearPairs(vectors: number[][], floor: number): Promise<Array<{ a: number; b: number; similarity: number }>> {
  if (vectors.length < 2) return [];
  const dims = vectors[0]!.length;
  const unit = vectors.map(normalise);
  const random = seeded(0x5eed);
  // Gaussian coordinates (Box-Muller): directions spread evenly over the sphere, as the probability above assumes.
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const planes = Array.from({ length: TABLES * BITS }, () => Array.from({ length: dims }, gauss));
  const seen = new Set<number>();
  const out: Array<{ a: number; b: number; similarity: number }> = [];
  const compare = (i: number, j: number) => {
    const [a, b] = i < j ? [i, j] : [j, i];
    const key = a * vectors.length + b;
    if (seen.has(key)) return;
    seen.add(key);
    const similarity = dot(unit[a]!, unit[b]!);
    if (similarity >= floor) out.push({ a, b, similarity });
  };
  // Tens of seconds of arithmetic at 20,000 memories: done in slices, so the API and the worker's
  // heartbeat in the same process go on meanwhile (a blocked heartbeat has its jobs taken away).
  let sliceStart = performance.now();
  const yieldNow = async () => {
    if (performance.now() - sliceStart < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
  const signs: boolean[][] = [];
  for (const v of unit) {
    signs.push(planes.map((p) => dot(v, p) >= 0));
    await yieldNow();
  }
  for (let t = 0; t < TABLES; t++) {
    const buckets = new Map<number, number[]>();
    for (let i = 0; i < unit.length; i++) {
      let key = 0;
      for (let bit = 0; bit < BITS; bit++) key = (key << 1) | Number(signs[i]![t * BITS + bit]);
      const bucket = buckets.get(key);
      if (bucket) bucket.push(i);
      else buckets.set(key, [i]);
    }
    for (const bucket of buckets.values()) {
      for (let from = 0; from < bucket.length; from += BUCKET_MAX) {
        const window = bucket.slice(from, from + BUCKET_MAX);
        for (let x = 0; x < window.length; x++) {
          for (let y = x + 1; y < window.length; y++) compare(window[x]!, window[y]!);
          await yieldNow();
        }
      }
    }
  }
  return out;
}

function normalise(v: number[]): number[] {
  const norm = Math.sqrt(dot(v, v));
  return norm ? v.map((x) => x / norm) : v;
}

function dot(a: number[], b: number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** mulberry32: a small seeded generator, so the hyperplanes are the same at every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

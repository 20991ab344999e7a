/**
 * Greedy maximal marginal relevance (docs/context.md): each step takes the candidate with the
 * best `lambda * relevance - (1 - lambda) * similarity to the closest one already taken`. Both
 * terms are min-max normalised over the candidates, relevance over their search scores and
 * similarity over the cosines between every two of them, so each spans [0, 1] on this pool and
 * lambda weighs like against like: 1 keeps the search order, 0 takes whatever differs most from
 * what was taken. Raw scores would not do: a fused search score is rank-based and the cosines of
 * one embedder crowd into a narrow band, so a fixed lambda would mean something else per query.
 */
export function mmrOrder(candidates: Array<{ score: number; vector: number[] | null }>, lambda: number): number[] {
  const relevance = minMax(candidates.map((c) => c.score));
  const n = candidates.length;
  const norms = candidates.map((c) => (c.vector ? Math.sqrt(dot(c.vector, c.vector)) : 0));
  // Cosine is symmetric: each pair is computed once and mirrored.
  const raw = candidates.map(() => new Array<number>(n).fill(1));
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const c = cosine(candidates[i]!.vector, norms[i]!, candidates[j]!.vector, norms[j]!);
      raw[i]![j] = raw[j]![i] = c;
      lo = Math.min(lo, c);
      hi = Math.max(hi, c);
    }
  }
  const span = hi - lo;
  const similarity = (i: number, j: number) => (span > 0 ? (raw[i]![j]! - lo) / span : 1);
  // Closest similarity to anything taken so far, per candidate; updated as each one is taken.
  const closest = candidates.map(() => 0);
  const left = new Set(Array.from({ length: n }, (_, i) => i));
  const order: number[] = [];
  while (left.size) {
    let best = -1;
    let bestValue = -Infinity;
    for (const i of left) {
      const value = lambda * relevance[i]! - (1 - lambda) * closest[i]!;
      if (value > bestValue) [best, bestValue] = [i, value];
    }
    order.push(best);
    left.delete(best);
    for (const i of left) closest[i] = Math.max(closest[i]!, similarity(best, i));
  }
  return order;
}

function minMax(xs: number[]): number[] {
  const lo = Math.min(...xs);
  const span = Math.max(...xs) - lo;
  return xs.map((x) => (span > 0 ? (x - lo) / span : 1));
}

/** Cosine similarity; 0 for a candidate without an embedding. */
function cosine(a: number[] | null, na: number, b: number[] | null, nb: number): number {
  return a && b && na && nb ? dot(a, b) / (na * nb) : 0;
}

export function dot(a: number[], b: number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

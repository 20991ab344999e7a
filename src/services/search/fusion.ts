import type { CandidateRow } from './candidates.ts';

/** The usual reciprocal-rank-fusion constant: damps the weight of the very first ranks. */
export const RRF_K = 60;

/**
 * Reciprocal-rank fusion of ranked candidate lists (best first). A memory scores
 * sum(1 / (RRF_K + rank)) over the lists it appears in, divided by the best score possible
 * (rank 1 in every list that returned anything), so the fused score is in [0, 1] and 1 means
 * "first everywhere". Ties keep the order of the first list.
 */
export function reciprocalRankFusion(lists: CandidateRow[][]): CandidateRow[] {
  const active = lists.filter((l) => l.length > 0);
  const best = active.length / (RRF_K + 1);
  const fused = new Map<string, { row: CandidateRow; sum: number; order: number }>();
  let order = 0;
  for (const list of active) {
    list.forEach((row, i) => {
      const entry = fused.get(row.id) ?? { row, sum: 0, order: order++ };
      entry.sum += 1 / (RRF_K + i + 1);
      fused.set(row.id, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.sum - a.sum || a.order - b.order)
    .map(({ row, sum }) => ({ ...row, score: Math.min(1, sum / best) }));
}

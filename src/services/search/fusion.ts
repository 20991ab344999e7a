import { scored, type CandidateRow } from './candidates.ts';

/** The usual reciprocal-rank-fusion constant: damps the weight of the very first ranks. */
export const RRF_K = 60;

/**
 * Reciprocal-rank fusion of ranked candidate lists (best first). A memory scores
 * sum(1 / (RRF_K + rank)) over the lists it appears in, divided by the best fusion possible:
 * rank 1 in every list searched, whether or not a list found anything. So the score is in
 * [0, 1] and means the same for every query: 1 is "first everywhere", and a memory only one of
 * two sides found is at most 0.5, however weak the rest of the results are, so a client can
 * threshold on it. Ties keep the order of the first list.
 */
export function reciprocalRankFusion(lists: CandidateRow[][]): CandidateRow[] {
  const best = lists.length / (RRF_K + 1);
  const fused = new Map<string, { row: CandidateRow; sum: number; order: number }>();
  let order = 0;
  for (const list of lists) {
    list.forEach((row, i) => {
      const entry = fused.get(row.id) ?? { row, sum: 0, order: order++ };
      entry.sum += 1 / (RRF_K + i + 1);
      fused.set(row.id, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.sum - a.sum || a.order - b.order).map(({ row, sum }) => scored(row, sum / best));
}

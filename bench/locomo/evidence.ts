/**
 * LoCoMo's evidence lists are mostly "D<session>:<turn>" but some entries are malformed:
 * several ids in one string ("D8:6; D9:17", "D9:1 D4:4 D4:6"), a stray colon ("D:11:26") or a
 * bare "D". Every well-formed id inside an entry is kept; entries without one are dropped.
 */
export function normaliseEvidence(entries: string[]): string[] {
  const ids = entries.flatMap((e) => [...e.matchAll(/D:?(\d+):(\d+)/g)].map((m) => `D${Number(m[1])}:${Number(m[2])}`));
  return [...new Set(ids)];
}

import type { ChangeKind } from '../../schemas/consolidation.ts';
import type { EvidenceMemory } from '../../schemas/consolidation.ts';
import { nearPairs, type Pair } from './near-pairs.ts';

/*
 * The offline proposals of a consolidation run (docs/consolidation.md, "What a run proposes"):
 * rules over the memories a run read, their vectors and how they were used. Pure: the run reads
 * and stores, this only decides.
 */

/** The cosine at or above which two memories are near-duplicates, unless the run names another. */
export const MERGE_SIMILARITY = 0.9;
/** Two facts this alike that differ in one short span are a fact and its newer value. */
export const SUPERSEDE_SIMILARITY = 0.75;
/** Archive candidates: never recalled, importance below this, stored longer ago than ARCHIVE_AGE_DAYS. */
export const ARCHIVE_IMPORTANCE = 0.3;
export const ARCHIVE_AGE_DAYS = 30;

export interface Candidate extends EvidenceMemory {
  vector: number[];
  /** The end user or sub-namespace it belongs to: memories of two never merge nor replace each other. */
  container_tag: string | null;
}

export interface Proposed {
  kind: ChangeKind;
  keep_id: string | null;
  memory_ids: string[];
  valid_to: string | null;
  members: string[];
  similarity: number | null;
  reason: string;
  proposed_by: 'heuristic' | 'llm';
}

/** Keeper order: pinned, then the most confirmed, the most recalled, the most important, the newest. */
export const keeperFirst = (a: EvidenceMemory, b: EvidenceMemory) =>
  Number(b.pinned) - Number(a.pinned) ||
  b.confirmations - a.confirmations ||
  b.recalls - a.recalls ||
  b.importance - a.importance ||
  Date.parse(b.created_at) - Date.parse(a.created_at) ||
  (a.id < b.id ? 1 : -1);

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * Near-duplicate clusters around keepers: each memory, in keeper order, not yet claimed takes
 * every unclaimed, unpinned memory at least `threshold` alike to it (or with the same words).
 * Around keepers, not transitively, so that a chain of near-matches does not merge memories
 * that are not themselves alike.
 */
export function mergeProposals(memories: Candidate[], pairs: Pair[], threshold: number): Proposed[] {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const near = new Map<string, Map<string, number>>();
  const link = (a: string, b: string, s: number) => near.set(a, (near.get(a) ?? new Map()).set(b, s));
  for (const p of pairs) {
    const [x, y] = [byId.get(p.a)!, byId.get(p.b)!];
    if (p.similarity < threshold || x.container_tag !== y.container_tag) continue;
    // Alike, yet naming other values (numbers, names): two facts, or a supersession's to decide, never a merge.
    if (!sameValues(x.text, y.text) || valueChanged(x.text, y.text)) continue;
    link(p.a, p.b, p.similarity);
    link(p.b, p.a, p.similarity);
  }
  const sameWords = new Map<string, string[]>();
  for (const m of memories) {
    const key = `${m.container_tag ?? ''}\u0000${words(m.text).join(' ')}`;
    if (key) sameWords.set(key, [...(sameWords.get(key) ?? []), m.id]);
  }
  for (const ids of sameWords.values()) for (const a of ids) for (const b of ids) if (a !== b && !near.get(a)?.has(b)) link(a, b, 1);

  const claimed = new Set<string>();
  const proposals: Proposed[] = [];
  for (const keeper of [...memories].sort(keeperFirst)) {
    if (claimed.has(keeper.id)) continue;
    claimed.add(keeper.id);
    const alike = near.get(keeper.id);
    if (!alike) continue;
    const taken = [...alike.keys()].filter((id) => !claimed.has(id) && !byId.get(id)!.pinned);
    if (!taken.length) continue;
    for (const id of taken) claimed.add(id);
    const similarity = Math.min(...taken.map((id) => alike.get(id)!));
    proposals.push({
      kind: 'merge',
      keep_id: keeper.id,
      memory_ids: taken,
      valid_to: null,
      members: [keeper.id, ...taken],
      similarity,
      reason: `${taken.length + 1} memories say the same thing (cosine at least ${round(similarity)}); the one kept is ${keeperWhy(keeper)}`,
      proposed_by: 'heuristic',
    });
  }
  return proposals;
}

const keeperWhy = (m: EvidenceMemory) =>
  m.pinned ? 'pinned' : m.confirmations || m.recalls ? 'the most confirmed and recalled' : 'the most important, then the newest';

const tokens = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
/** A word that names a value: it has a digit, or a capital letter past the first word (a name, a place, a weekday). */
const isValue = (word: string, at: number) => /\p{N}/u.test(word) || (at > 0 && /^\p{Lu}/u.test(word));

/**
 * Whether every value word of either text (a number, a capitalised word past the first) is a word
 * of the other. An embedder scores two sentences of one pattern as near-identical whatever their
 * values ("capped at 4 thousand euros since December" and "45 thousand since August": 0.995 on the
 * bundled model), so similarity alone merges different facts (bench/README.md, "Consolidation").
 */
export function sameValues(a: string, b: string): boolean {
  const values = (t: string) => tokens(t).filter(isValue);
  const [wa, wb] = [new Set(tokens(a).map((w) => w.toLowerCase())), new Set(tokens(b).map((w) => w.toLowerCase()))];
  return values(a).every((v) => wb.has(v.toLowerCase())) && values(b).every((v) => wa.has(v.toLowerCase())) && sameOpening(a, b);
}

/** Words a sentence opens with that name nobody: a capital there is the sentence's, not a name's. */
const OPENERS = new Set('a an the this that these those there it its our we i you he she they my your their his her one each every all some no'.split(' '));

/** Two sentences that open with two different capitalised words open with two names ("Nadia has…", "Elena has…"). */
function sameOpening(a: string, b: string): boolean {
  const [x, y] = [tokens(a)[0], tokens(b)[0]];
  if (!x || !y || x.toLowerCase() === y.toLowerCase()) return true;
  const named = (w: string) => /^\p{Lu}/u.test(w) && !OPENERS.has(w.toLowerCase());
  return !(named(x) && named(y));
}

/**
 * Whether two texts state one thing with two values: their words differ in one span of at most
 * three words on each side, the rest (at least four words, and most of each text) the same, and
 * the spans name different values ("... listens on port 5432" and "... on port 6543"; "Ana lives
 * in Lisbon" and "... in Porto"). Spans that differ only in wording ("every" and "each") say the
 * same thing: a merge, not a supersession.
 */
export function valueChanged(a: string, b: string): boolean {
  const [x, y] = [tokens(a), tokens(b)];
  const same = (i: number, j: number) => x[i]!.toLowerCase() === y[j]!.toLowerCase();
  let prefix = 0;
  while (prefix < x.length && prefix < y.length && same(prefix, prefix)) prefix++;
  let suffix = 0;
  while (suffix < x.length - prefix && suffix < y.length - prefix && same(x.length - 1 - suffix, y.length - 1 - suffix)) suffix++;
  const [dx, dy] = [x.length - prefix - suffix, y.length - prefix - suffix];
  const shared = prefix + suffix;
  if (dx < 1 || dy < 1 || dx > 3 || dy > 3 || shared < 4 || shared / Math.max(x.length, y.length) < 0.6) return false;
  const values = (words: string[]) =>
    new Set(
      words
        .slice(prefix, words.length - suffix)
        .filter((w, i) => isValue(w, prefix + i))
        .map((w) => w.toLowerCase()),
    );
  const [vx, vy] = [values(x), values(y)];
  return (vx.size > 0 || vy.size > 0) && ([...vx].some((v) => !vy.has(v)) || [...vy].some((v) => !vx.has(v)));
}

const FACT_KINDS = new Set(['fact', 'preference']);

/** Supersessions among facts and preferences not merged: a pair alike, one span apart, the older replaced by the newer. */
export function supersedeProposals(memories: Candidate[], pairs: Pair[], taken: Set<string>): Proposed[] {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const proposals: Proposed[] = [];
  for (const p of [...pairs].sort((a, b) => b.similarity - a.similarity)) {
    const [x, y] = [byId.get(p.a)!, byId.get(p.b)!];
    if (p.similarity < SUPERSEDE_SIMILARITY || taken.has(x.id) || taken.has(y.id)) continue;
    if (x.container_tag !== y.container_tag || !FACT_KINDS.has(x.category) || !FACT_KINDS.has(y.category) || !valueChanged(x.text, y.text)) continue;
    const [older, newer] = Date.parse(x.valid_from) <= Date.parse(y.valid_from) ? [x, y] : [y, x];
    if (older.pinned || older.valid_from === newer.valid_from) continue;
    taken.add(older.id).add(newer.id);
    proposals.push({
      kind: 'supersede',
      keep_id: newer.id,
      memory_ids: [older.id],
      valid_to: null,
      members: [newer.id, older.id],
      similarity: p.similarity,
      reason: `The newer memory gives another value for the same thing (cosine ${round(p.similarity)}, one span of words apart); the older one stops holding where the newer starts`,
      proposed_by: 'heuristic',
    });
  }
  return proposals;
}

/** Noise: never recalled, of low importance, old, not pinned, and in no other change. */
export function archiveProposals(memories: Candidate[], taken: Set<string>, now: number): Proposed[] {
  const before = now - ARCHIVE_AGE_DAYS * 86_400_000;
  return memories
    .filter((m) => !m.pinned && !taken.has(m.id) && m.recalls === 0 && m.confirmations === 0 && m.importance < ARCHIVE_IMPORTANCE)
    .filter((m) => Date.parse(m.created_at) < before)
    .map((m) => ({
      kind: 'archive' as const,
      keep_id: null,
      memory_ids: [m.id],
      valid_to: null,
      members: [m.id],
      similarity: null,
      reason: `Never recalled nor confirmed, importance ${m.importance} (below ${ARCHIVE_IMPORTANCE}), stored more than ${ARCHIVE_AGE_DAYS} days ago`,
      proposed_by: 'heuristic' as const,
    }));
}

/** The offline proposals over what a run read, merges first: a memory is in one change at most. */
export async function heuristicProposals(memories: Candidate[], threshold: number, now: number): Promise<{ proposals: Proposed[]; pairs: Pair[] }> {
  const near = await nearPairs(
    memories.map((m) => m.vector),
    Math.min(threshold, SUPERSEDE_SIMILARITY),
  );
  const pairs = near.map((p) => ({ a: memories[p.a]!.id, b: memories[p.b]!.id, similarity: p.similarity }));
  const merges = mergeProposals(memories, pairs, threshold);
  const taken = new Set(merges.flatMap((m) => m.members));
  const supersessions = supersedeProposals(memories, pairs, taken);
  return { proposals: [...merges, ...supersessions, ...archiveProposals(memories, taken, now)], pairs };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

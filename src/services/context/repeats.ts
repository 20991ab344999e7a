import { dot } from './mmr.ts';

/**
 * Two memories that say the same thing (docs/context.md, "No repeats"): the same words once case
 * and punctuation are set aside, or the cosine of their embeddings at or above SAME_COSINE with
 * the same numbers in the same order, since an embedder hardly tells "room 12" from "room 14".
 * The block shows the first of them its order reaches and drops the others.
 */

/**
 * On the bundled embedder, over the synthetic set of bench/context/repeats.ts, no two distinct
 * memories came above 0.743 (one word apart in meaning) while 70 of 90 near-copy pairs came at or
 * above 0.8 (bench/README.md, "Context without repeats").
 */
export const SAME_COSINE = 0.8;

/** The words of a text, lower case, in order: "Staging: ares!" and "staging ares" are the same. */
export const sameWords = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');

const numbers = (words: string) => (words.match(/\p{N}+/gu) ?? []).join(' ');

interface Compared {
  words: string;
  numbers: string;
  /** The embedding scaled to length 1 (its dot product with another is their cosine); null without one. */
  unit: number[] | null;
}

/**
 * Whether a memory repeats one of those taken, by the memories' embeddings (by id, as
 * `readVectors` answers them); each memory's words and unit vector are worked out once.
 */
export function repeatCheck(vectors: Map<string, number[]>) {
  const seen = new Map<string, Compared>();
  const of = (m: { id: string; text: string }): Compared => {
    let c = seen.get(m.id);
    if (!c) {
      const v = vectors.get(m.id);
      const norm = v ? Math.sqrt(dot(v, v)) : 0;
      const words = sameWords(m.text);
      c = { words, numbers: numbers(words), unit: v && norm ? v.map((x) => x / norm) : null };
      seen.set(m.id, c);
    }
    return c;
  };
  return (item: { id: string; text: string }, taken: Array<{ id: string; text: string }>): boolean => {
    const a = of(item);
    return taken.some((t) => {
      const b = of(t);
      if (a.words === b.words) return true;
      return a.numbers === b.numbers && a.unit !== null && b.unit !== null && dot(a.unit, b.unit) >= SAME_COSINE;
    });
  };
}
export type RepeatCheck = ReturnType<typeof repeatCheck>;

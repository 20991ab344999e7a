/**
 * Where text may be cut, strongest first. A piece too long for a chunk is cut at the next level
 * down; the pieces are then packed back together with the separator of the level they were cut at.
 */
const LEVELS: Array<{ at: RegExp; join: string }> = [
  { at: /\n\s*\n/, join: '\n\n' }, // paragraphs
  { at: /\n/, join: '\n' }, // lines (rows, list items)
  { at: /(?<=[.!?…。！？]["'”’)\]]*)\s+/, join: ' ' }, // sentences
  { at: /\s+/, join: ' ' }, // words
];

/**
 * The text in chunks of at most `maxChars`, cut at paragraph, then line, then sentence, then
 * word boundaries, adjacent small pieces packed together. A word is cut only when it alone is
 * longer than a chunk. No chunk is empty; the same text always gives the same chunks.
 */
export function chunkText(text: string, maxChars = 2000): string[] {
  if (!(maxChars >= 1)) throw new RangeError('maxChars must be at least 1');
  return split(text.trim(), 0, maxChars);
}

function split(text: string, level: number, max: number): string[] {
  if (!text) return [];
  if (text.length <= max) return [text];
  if (level === LEVELS.length) return cutWord(text, max);
  const { at, join } = LEVELS[level]!;
  const pieces = text
    .split(at)
    .map((p) => p.trim())
    .flatMap((p) => (p.length <= max ? (p ? [p] : []) : split(p, level + 1, max)));
  const chunks: string[] = [];
  for (const piece of pieces) {
    const last = chunks.length - 1;
    if (last >= 0 && chunks[last]!.length + join.length + piece.length <= max) chunks[last] += join + piece;
    else chunks.push(piece);
  }
  return chunks;
}

/** A single token longer than a chunk, cut in slices of at most `max` without splitting a surrogate pair. */
function cutWord(word: string, max: number): string[] {
  const slices: string[] = [];
  for (let start = 0; start < word.length;) {
    let end = Math.min(start + max, word.length);
    if (end < word.length && end - start > 1 && /[\uD800-\uDBFF]/.test(word[end - 1]!)) end--;
    slices.push(word.slice(start, end));
    start = end;
  }
  return slices;
}

/**
 * Where text may be cut, strongest first. A piece too long for a chunk is cut at the next level
 * down; the pieces are then packed back together with the separator of the level they were cut at.
 */
const LEVELS: Array<{ at: RegExp; join: string }> = [
  { at: /\n\s*\n/g, join: '\n\n' }, // paragraphs
  { at: /\n/g, join: '\n' }, // lines (rows, list items)
  { at: /(?<=[.!?…。！？]["'”’)\]]*)\s+/g, join: ' ' }, // sentences
  { at: /\s+/g, join: ' ' }, // words
];

/** A chunk and where it lies in the text it was cut from: `start` its first character, `end` past its last. */
export interface Chunk {
  text: string;
  start: number;
  end: number;
}

/**
 * The text in chunks of at most `maxChars`, cut at paragraph, then line, then sentence, then
 * word boundaries, adjacent small pieces packed together. A word is cut only when it alone is
 * longer than a chunk. No chunk is empty; the same text always gives the same chunks.
 */
export function chunkText(text: string, maxChars = 2000): string[] {
  return chunkSpans(text, maxChars).map((c) => c.text);
}

/** chunkText's chunks with where each lies in `text`, so a reader that knows where the text's pages begin can say which a chunk is on. */
export function chunkSpans(text: string, maxChars = 2000): Chunk[] {
  if (!(maxChars >= 1)) throw new RangeError('maxChars must be at least 1');
  return split(trimmed({ text, start: 0, end: text.length }), 0, maxChars);
}

/** The span without its surrounding white space (what String.prototype.trim removes, which is \s). */
function trimmed(c: Chunk): Chunk {
  const lead = /^\s*/.exec(c.text)![0].length;
  const text = c.text.trim();
  return { text, start: c.start + lead, end: c.start + lead + text.length };
}

function split(c: Chunk, level: number, max: number): Chunk[] {
  if (!c.text) return [];
  if (c.text.length <= max) return [c];
  if (level === LEVELS.length) return cutWord(c, max);
  const { at, join } = LEVELS[level]!;
  const pieces = cut(c, at)
    .map(trimmed)
    .flatMap((p) => (p.text.length <= max ? (p.text ? [p] : []) : split(p, level + 1, max)));
  const chunks: Chunk[] = [];
  for (const piece of pieces) {
    const last = chunks.at(-1);
    if (last && last.text.length + join.length + piece.text.length <= max)
      chunks[chunks.length - 1] = { text: last.text + join + piece.text, start: last.start, end: piece.end };
    else chunks.push(piece);
  }
  return chunks;
}

/** The span cut at every match of `at` (as String.prototype.split cuts), each piece with its place. */
function cut(c: Chunk, at: RegExp): Chunk[] {
  const pieces: Chunk[] = [];
  let from = 0;
  for (const m of c.text.matchAll(at)) {
    pieces.push({ text: c.text.slice(from, m.index), start: c.start + from, end: c.start + m.index });
    from = m.index + m[0].length;
  }
  pieces.push({ text: c.text.slice(from), start: c.start + from, end: c.end });
  return pieces;
}

/** A single token longer than a chunk, cut in slices of at most `max` without splitting a surrogate pair. */
function cutWord(c: Chunk, max: number): Chunk[] {
  const slices: Chunk[] = [];
  const word = c.text;
  for (let start = 0; start < word.length;) {
    let end = Math.min(start + max, word.length);
    if (end < word.length && end - start > 1 && /[\uD800-\uDBFF]/.test(word[end - 1]!)) end--;
    slices.push({ text: word.slice(start, end), start: c.start + start, end: c.start + end });
    start = end;
  }
  return slices;
}

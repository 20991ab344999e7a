/** BM25's usual constants: term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.75;
/**
 * The length, in distinct lexemes, below which a document counts as this long: a memory of a
 * sentence or two is not less relevant for being shorter than another, but a file chunk of
 * 2,000 characters (150 to 200 lexemes) holds some of any query's words by its length alone.
 * On LoCoMo's turns (21 distinct lexemes on average, the answers' 28 to 30) normalising their
 * small differences cost recall; beside passages of a chunk's length, weaker normalisation
 * (a lower B) let the passages crowd the turns out. 24 was chosen among 16, 24 and 32 on the
 * tuning half of LoCoMo, against both (bench/README.md, "Length normalisation beside file chunks").
 */
const SHORTEST = 24;

export interface Bm25Doc {
  id: string;
  /** The document's distinct lexemes (its tsvector's). */
  lexemes: string[];
}

/**
 * BM25 over the full-text matches of an OR of weighted lexemes, best first. Each lexeme counts
 * its weight (1 for the query's own words) times its inverse document frequency, counted among
 * `docs` (all the matches when the match cap was not reached, so exact then) against `total`
 * documents in scope. Term frequency is taken as 1: memories are short, and a repeated word says
 * little more; a length under SHORTEST counts as SHORTEST. `score` is the document's BM25
 * divided by that of an average-length document holding every matched lexeme, capped at 1.
 */
export function rankBm25(docs: Bm25Doc[], weights: Map<string, number>, total: number): Array<Bm25Doc & { score: number }> {
  if (!docs.length) return [];
  const hits = docs.map((d) => d.lexemes.filter((l) => weights.has(l)));
  const df = new Map<string, number>();
  for (const h of hits) for (const l of h) df.set(l, (df.get(l) ?? 0) + 1);
  const n = Math.max(total, docs.length);
  // A lexeme's weight in the query (1, or less for feedback words) times its rarity.
  const idf = new Map([...df].map(([l, f]) => [l, weights.get(l)! * Math.log(1 + (n - f + 0.5) / (f + 0.5))]));
  const length = (d: Bm25Doc) => Math.max(SHORTEST, d.lexemes.length);
  const avgdl = docs.reduce((s, d) => s + length(d), 0) / docs.length;
  const best = [...idf.values()].reduce((s, w) => s + w, 0) * (K1 + 1);
  return docs
    .map((d, i) => {
      const weight = hits[i]!.reduce((s, l) => s + idf.get(l)!, 0);
      const bm25 = (weight * (K1 + 1)) / (1 + K1 * (1 - B + (B * length(d)) / avgdl));
      // Built field by field: spreading the row object cost 0.3 ms of the 0.4 per 250 matches.
      return { id: d.id, lexemes: d.lexemes, score: best > 0 ? Math.min(1, bm25 / best) : 0 };
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

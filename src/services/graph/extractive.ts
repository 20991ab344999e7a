/**
 * The summary without an LLM (documented in docs/graph.md): themes are the terms found in the
 * most memories; the summary is the first sentences of the memories whose terms are the most
 * shared with the rest (the central ones), in the order given.
 */
const STOPWORDS = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before being below between both
   but by can could did do does doing down during each few for from further had has have having he her here hers herself him
   himself his how i if in into is it its itself just let me more most my myself no nor not now of off on once only or other
   our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these
   they this those through to too under until up very was we were what when where which while who whom why will with would
   you your yours yourself yourselves user user's`.split(/\s+/),
);

const terms = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}']+/u)
      .map((w) => w.replace(/^'+|'+$/g, ''))
      .filter((w) => w.length >= 3 && !STOPWORDS.has(w)),
  );

const firstSentence = (text: string) => {
  const s = text
    .trim()
    .split(/(?<=[.!?])\s+|\n+/)[0]!
    .trim();
  const cut = s.length > 300 ? `${s.slice(0, 297)}...` : s;
  return /[.!?]$/.test(cut) ? cut : `${cut}.`;
};

export function extractiveSummary(texts: string[], maxSentences = 5, maxThemes = 5): { summary: string; themes: string[] } {
  const termSets = texts.map(terms);
  const df = new Map<string, number>();
  for (const set of termSets) for (const t of set) df.set(t, (df.get(t) ?? 0) + 1);
  const themes = [...df.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, maxThemes)
    .map(([t]) => t);
  const scored = termSets.map((set, i) => {
    let sum = 0;
    for (const t of set) sum += df.get(t)! - 1;
    return { i, score: set.size ? sum / Math.sqrt(set.size) : 0 };
  });
  const chosen = scored
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, maxSentences)
    .sort((a, b) => a.i - b.i);
  const sentences = [...new Set(chosen.map(({ i }) => firstSentence(texts[i]!)))];
  return { summary: sentences.join(' '), themes };
}

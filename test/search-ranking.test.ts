import { describe, expect, it } from 'vitest';
import { rankBm25 } from '../src/services/search/bm25.ts';
import type { CandidateRow } from '../src/services/search/candidates.ts';
import { reciprocalRankFusion } from '../src/services/search/fusion.ts';
import { expandQuery, secondPassRanking } from '../src/services/search/text.ts';

const w = (...lexemes: string[]) => new Map(lexemes.map((l) => [l, 1]));

describe('BM25 ranking of full-text matches', () => {
  const docs = [
    { id: 'a', lexemes: ['caroline', 'said', 'hello'] },
    { id: 'b', lexemes: ['caroline', 'adopt', 'agenc'] },
    { id: 'c', lexemes: ['caroline', 'went', 'home'] },
    { id: 'd', lexemes: ['melani', 'paint', 'sunris', 'lake', 'morn', 'calm', 'quiet', 'water'] },
  ];

  it('weighs rare query words above common ones and scores in [0, 1]', () => {
    const ranked = rankBm25(docs.slice(0, 3), w('caroline', 'adopt'), 100);
    expect(ranked.map((r) => r.id)).toEqual(['b', 'a', 'c']);
    for (const r of ranked) expect(r.score).toBeGreaterThan(0);
    expect(ranked[0]!.score).toBeLessThanOrEqual(1);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
  });

  it('ranks a passage below a short memory of the same match, short memories alike, and ignores documents without a query word', () => {
    const passage = { id: 'p', lexemes: ['sunris', ...Array.from({ length: 150 }, (_, i) => `word${i}`)] };
    const ranked = rankBm25([docs[0]!, passage, docs[3]!, { id: 'e', lexemes: ['sunris', 'lake'] }], w('sunris'), 10);
    expect(ranked.map((r) => r.id)).toEqual(['d', 'e', 'p', 'a']);
    // Two and eight lexemes are both under the shortest length counted: the same score.
    expect(ranked[0]!.score).toBe(ranked[1]!.score);
    expect(ranked[1]!.lexemes).toEqual(['sunris', 'lake']);
    expect(ranked[2]!.score).toBeGreaterThan(0);
    expect(ranked[2]!.score).toBeLessThan(ranked[1]!.score / 2);
    expect(ranked[3]!.score).toBe(0);
    expect(rankBm25([], w('x'), 10)).toEqual([]);
  });

  it('lets a lower-weighted (feedback) word count for less than a query word', () => {
    const weights = new Map([
      ['adopt', 1],
      ['agenc', 0.3],
    ]);
    const ranked = rankBm25(
      [
        { id: 'x', lexemes: ['agenc', 'call'] },
        { id: 'y', lexemes: ['adopt', 'call'] },
      ],
      weights,
      100,
    );
    expect(ranked.map((r) => r.id)).toEqual(['y', 'x']);
  });
});

describe('query expansion from the first full-text pass', () => {
  const ranked = [
    { id: 'a', lexemes: ['adopt', 'agenc', 'research'], score: 0.9 },
    { id: 'b', lexemes: ['adopt', 'famili'], score: 0.5 },
    { id: 'c', lexemes: ['adopt', 'kid'], score: 0.4 },
    { id: 'd', lexemes: ['adopt', 'dog'], score: 0.1 },
  ];

  it('adds the words of the three best matches at a lower weight', () => {
    const expanded = expandQuery(new Map([['adopt', 1]]), { ranked, exhaustive: true })!;
    expect(expanded.get('adopt')).toBe(1);
    expect([...expanded.keys()].sort()).toEqual(['adopt', 'agenc', 'famili', 'kid', 'research']);
    expect(expanded.get('agenc')).toBeGreaterThan(0);
    expect(expanded.get('agenc')).toBeLessThan(1);
  });

  it('does not expand from a sampled (capped) first pass or from nothing', () => {
    expect(expandQuery(new Map([['adopt', 1]]), { ranked, exhaustive: false })).toBeNull();
    expect(expandQuery(new Map([['adopt', 1]]), { ranked: [], exhaustive: true })).toBeNull();
  });

  it('keeps every first-pass match in the second pass, whose sample the common added words may have filled', () => {
    const expanded = expandQuery(new Map([['adopt', 1]]), { ranked, exhaustive: true })!;
    // The second pass sampled only memories matching an added word ('famili'), none of the query's.
    const second = { ranked: [{ id: 'e', lexemes: ['famili', 'trip'], score: 0.2 }], exhaustive: false };
    const merged = secondPassRanking(ranked, second, expanded, { tenantId: 't', collections: ['c'], memoryCount: 100, tableRows: 100, graphRows: 100 });
    expect(merged.ranked.map((d) => d.id).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(merged.ranked[0]!.id).not.toBe('e');
    expect(merged.exhaustive).toBe(false);
    const complete = { ranked: ranked.slice(0, 2), exhaustive: true };
    expect(
      secondPassRanking(ranked.slice(0, 2), complete, expanded, { tenantId: 't', collections: ['c'], memoryCount: 100, tableRows: 100, graphRows: 100 }),
    ).toBe(complete);
  });
});

describe('hybrid score: reciprocal-rank fusion against the best fusion possible', () => {
  const rows = (...ids: string[]) => ids.map((id) => ({ id, score: 0.5 }) as CandidateRow);

  it('scores 1 only for a memory first on both sides', () => {
    const fused = reciprocalRankFusion([rows('a', 'b'), rows('a', 'c')]);
    expect(fused.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(fused[0]!.score).toBe(1);
    expect(fused[1]!.score).toBeCloseTo(61 / 62 / 2, 10);
  });

  it('keeps a weak best match below 1 when only one side found anything', () => {
    const fused = reciprocalRankFusion([rows('a', 'b'), []]);
    expect(fused[0]!.score).toBe(0.5);
    expect(fused[1]!.score).toBeCloseTo(61 / 62 / 2, 10);
  });

  it('does not depend on the other results: the same ranks give the same score', () => {
    const alone = reciprocalRankFusion([rows('x'), rows('y', 'x')]);
    const crowded = reciprocalRankFusion([rows('x', 'p', 'q'), rows('y', 'x', 'r')]);
    expect(alone.find((r) => r.id === 'x')!.score).toBe(crowded.find((r) => r.id === 'x')!.score);
  });
});

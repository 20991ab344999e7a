/**
 * Where a context request's time goes (docs/context.md), in this process on a database that
 * bench/search/run.ts loaded and kept (`--load-only`), through the service's own steps one after
 * the other: the collections' scope, the stable part's read, the candidates' search, the
 * embeddings' read (both parts'), the stable part's packing, MMR, and the per-query part's
 * packing, split into token counting (the
 * strings it counts, counted again alone) and the rest (rendering). Then whole requests
 * (buildContext, whose stable read and search run side by side) on other queries, since search
 * caches its answers.
 *
 *   node --import tsx bench/search/run.ts --n 100000 --db orgmem_bench_100000 --load-only
 *   node --import tsx bench/context/breakdown.ts --db orgmem_bench_100000
 */
import { parseArgs } from 'node:util';
import { RECALLED_PREAMBLE, recalledBlock } from '../../src/core/recalled.ts';
import type { ContextInput } from '../../src/schemas/context.ts';
import {
  buildContext,
  contextQuery,
  packQuery,
  packStable,
  readStable,
  readVectors,
  recall,
  stableReach,
  withoutStable,
  withVectors,
} from '../../src/services/context/context.ts';
import { mmrOrder } from '../../src/services/context/mmr.ts';
import { repeatCheck } from '../../src/services/context/repeats.ts';
import { countTokens } from '../../src/services/context/tokens.ts';
import { resolveScope } from '../../src/services/search/search.ts';
import { round, summary } from '../lib/stats.ts';
import { queries } from '../search/corpus.ts';
import { openInProcess } from '../search/in-process.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'orgmem_bench_100000' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    collection: { type: 'string', default: 'main' },
    samples: { type: 'string', default: '200' },
    'max-tokens': { type: 'string', default: '2000' },
  },
});
const SAMPLES = Number(args.samples);
const { ctx, close } = await openInProcess({ base: args.base!, db: args.db! }, 10);
const input = (query: string): ContextInput => ({
  query,
  max_tokens: Number(args['max-tokens']),
  limit: 20,
  mmr_lambda: 0.3,
  trust: null,
  container_tag: null,
  as_of: null,
});

const steps = ['scope', 'stable read', 'search', 'embeddings read', 'stable packing', 'mmr', 'query packing', 'of which token counting'] as const;
const times = Object.fromEntries(steps.map((s) => [s, [] as number[]])) as Record<(typeof steps)[number], number[]>;
const timed = async <T>(step: (typeof steps)[number], run: () => T | Promise<T>): Promise<T> => {
  const started = performance.now();
  const out = await run();
  times[step].push(performance.now() - started);
  return out;
};

try {
  // A few requests first, so that connections, the embedder and the tokenizer are warm.
  for (const q of queries(10, 4)) await buildContext(ctx, input(q), args.collection!);

  for (const q of queries(SAMPLES, 2)) {
    const req = input(q);
    const { collections } = await timed('scope', () => resolveScope(ctx, args.collection!));
    const rows = await timed('stable read', () => readStable(ctx, collections, req));
    const found = await timed('search', () => recall(ctx, contextQuery(req), req, args.collection!));
    const vectors = await timed('embeddings read', () => readVectors(ctx, [...stableReach(rows, req.max_tokens), ...found]));
    const repeats = repeatCheck(vectors);
    const stable = await timed('stable packing', () => packStable(rows, req.max_tokens, repeats));
    const pool = withoutStable(found, stable);
    const order = await timed('mmr', () => mmrOrder(withVectors(pool, vectors), req.mmr_lambda).map((i) => pool[i]!));
    const picked = await timed('query packing', () => packQuery(stable, order, req, repeats));
    // What packQuery counted: its frame, each candidate considered alone, and the block at least once.
    await timed('of which token counting', () => {
      countTokens(`${stable.text || RECALLED_PREAMBLE}\n\n${recalledBlock([])}`);
      for (const m of order) countTokens(recalledBlock([{ collection: m.collection, text: m.text }]));
      countTokens(picked.text);
    });
  }
  const total: number[] = [];
  for (const q of queries(SAMPLES, 3)) {
    const started = performance.now();
    await buildContext(ctx, input(q), args.collection!);
    total.push(performance.now() - started);
  }

  console.log(`| step (${args.db}, ${SAMPLES} queries, max_tokens ${args['max-tokens']}) | p50 ms | p95 ms |\n|---|---|---|`);
  for (const step of steps) {
    const s = summary(times[step]);
    console.log(`| ${step} | ${round(s.p50, 2)} | ${round(s.p95, 2)} |`);
  }
  const s = summary(total);
  console.log(`| whole request (buildContext) | ${round(s.p50, 2)} | ${round(s.p95, 2)} |`);
} finally {
  await close();
}

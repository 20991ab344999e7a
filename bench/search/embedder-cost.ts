/**
 * What the bundled embedder adds to a search: embedding one query at a time (as search does on
 * a query-embedding cache miss), cold load included separately. Engine numbers in run.ts use the
 * hash embedder, so this is the cost to add for the default configuration.
 *
 *   node --import tsx bench/search/embedder-cost.ts [--samples 200]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { localUseEmbedder } from '../../src/ports/embedder/local-use.ts';
import { round, summary } from '../lib/stats.ts';
import { queries } from './corpus.ts';

const { values: args } = parseArgs({ options: { samples: { type: 'string', default: '200' } } });
const embedder = localUseEmbedder();
const t0 = performance.now();
await embedder.embed(['warm up the model']);
const loadMs = round(performance.now() - t0);
const times: number[] = [];
for (const q of queries(Number(args.samples), 11)) {
  const started = performance.now();
  await embedder.embed([q]);
  times.push(performance.now() - started);
}
const result = { embedder: embedder.name, load_and_first_ms: loadMs, per_query_ms: summary(times), samples: times.length };
process.stdout.write(`${JSON.stringify(result)}\n`);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/embedder-cost.json', JSON.stringify(result, null, 2));

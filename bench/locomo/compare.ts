/**
 * Two LoCoMo runs (bench/locomo/run.ts reports) side by side, question by question: per mode,
 * category and k, the recall of each and the difference with its 95% interval from a paired
 * bootstrap (the questions of the cell drawn with replacement, 10,000 times, the same draws for
 * both runs; seeded, so the same reports give the same intervals). A category holds 92 to 841
 * questions: a difference whose interval holds zero is one the questions cannot tell from chance.
 *
 *   node --import tsx bench/locomo/compare.ts bench/results/locomo.json bench/results/locomo-observed.json [--mode hybrid]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { rng, round } from '../lib/stats.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { mode: { type: 'string', default: 'hybrid' }, draws: { type: 'string', default: '10000' } },
});
const [beforeFile, afterFile] = positionals;
if (!beforeFile || !afterFile) throw new Error('usage: bench/locomo/compare.ts BEFORE.json AFTER.json [--mode hybrid]');

interface Answer {
  id: string;
  category: number;
  recall: number[];
}
interface Report {
  per_question?: Record<string, Answer[]>;
}

const answers = (file: string) => {
  const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
  const list = report.per_question?.[args.mode!];
  if (!list) throw new Error(`${file} holds no per-question ${args.mode} results (run bench/locomo/run.ts with this build)`);
  return new Map(list.map((a) => [a.id, a]));
};
const before = answers(beforeFile);
const after = answers(afterFile);
const pairs = [...before].flatMap(([key, b]) => (after.has(key) ? [[b, after.get(key)!] as const] : []));
if (pairs.length !== before.size || pairs.length !== after.size)
  throw new Error(`the runs answered different questions (${before.size} and ${after.size}, ${pairs.length} in both)`);

const KS = [5, 10, 25, 50];
const DRAWS = Number(args.draws);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const pct = (x: number) => round(100 * x);

console.log(`| category | questions | k | before | after | difference | 95% interval |`);
console.log(`|---|---|---|---|---|---|---|`);
for (const category of [1, 2, 3, 4, 0]) {
  const cell = pairs.filter(([b]) => category === 0 || b.category === category);
  const random = rng(category + 1);
  // The same resampled questions for every k, so the intervals of one category are read together.
  const draws = Array.from({ length: DRAWS }, () => Array.from(cell, () => random.int(cell.length)));
  KS.forEach((k, i) => {
    const diffs = cell.map(([b, a]) => a.recall[i]! - b.recall[i]!);
    const resampled = draws.map((draw) => mean(draw.map((j) => diffs[j]!))).sort((x, y) => x - y);
    const [low, high] = [resampled[Math.floor(0.025 * DRAWS)]!, resampled[Math.ceil(0.975 * DRAWS) - 1]!];
    const name = category === 0 ? 'overall' : String(category);
    console.log(
      `| ${name} | ${cell.length} | ${k} | ${pct(mean(cell.map(([b]) => b.recall[i]!)))} | ${pct(mean(cell.map(([, a]) => a.recall[i]!)))} | ${pct(mean(diffs))} | ${pct(low)} to ${pct(high)} |`,
    );
  });
}

/**
 * Markdown tables from bench/results/*.json, for docs/search.md.
 *   node --import tsx bench/report.ts
 */
import { existsSync, readFileSync } from 'node:fs';

const read = (f: string) => (existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : undefined);
const out: string[] = [];

for (const n of [100000, 1000000]) {
  const r = read(`bench/results/search-${n}.json`);
  if (!r) continue;
  out.push(`#### N = ${r.rows.toLocaleString('en')} memories (${r.database_size})`, '');
  if (r.insert)
    out.push(
      `Bulk insert through REST (\`POST C/memories/bulk\`, 100 per call, ${r.insert.concurrency} in flight): **${r.insert.per_second} memories/s** (${r.insert.memories.toLocaleString('en')} in ${r.insert.seconds} s).`,
      '',
    );
  out.push('| scenario | conc. | search_ms p50 / p95 / p99 | HTTP ms p50 / p95 / p99 | QPS | short |', '|---|---|---|---|---|---|');
  for (const s of r.search) {
    const f = (x: { p50: number; p95: number; p99: number }) => `${x.p50} / ${x.p95} / ${x.p99}`;
    out.push(`| ${s.scenario} | ${s.concurrency} | ${f(s.search_ms)} | ${f(s.http_ms)} | ${s.qps} | ${s.short_results} |`);
  }
  out.push('');
}
const e = read('bench/results/embedder-cost.json');
if (e)
  out.push(
    `Bundled embedder (${e.embedder}), one query at a time: p50 ${e.per_query_ms.p50} ms, p95 ${e.per_query_ms.p95} ms, p99 ${e.per_query_ms.p99} ms (${e.samples} queries; model load + first call ${e.load_and_first_ms} ms). A repeated query costs 0 ms (query-embedding cache).`,
    '',
  );
for (const f of ['bench/results/locomo.json', 'bench/results/locomo-captions.json']) {
  const l = read(f);
  if (!l) continue;
  out.push(
    `#### LoCoMo (${l.turns} turns, ${l.questions.with_evidence} questions of categories 1-4 with evidence${l.captions ? ', photo captions appended' : ''})`,
    '',
  );
  out.push('| mode | category | questions | R@5 | R@10 | R@25 | R@50 |', '|---|---|---|---|---|---|---|');
  for (const [mode, cats] of Object.entries(l.recall as Record<string, Record<string, Record<string, number>>>)) {
    for (const [cat, v] of Object.entries(cats)) {
      out.push(`| ${mode} | ${cat.replace('category_', '')} | ${v.questions} | ${v['recall@5']} | ${v['recall@10']} | ${v['recall@25']} | ${v['recall@50']} |`);
    }
  }
  const d = l.dragon_baseline;
  out.push(`| DRAGON (paper) | overall | | ${d['recall@5']} | ${d['recall@10']} | ${d['recall@25']} | ${d['recall@50']} |`, '');
}
process.stdout.write(out.join('\n') + '\n');

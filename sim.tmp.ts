import { readFileSync, writeFileSync } from 'node:fs';
import { api, startOrgmem } from './bench/lib/server.ts';
import { pool } from './bench/lib/stats.ts';
import { normaliseEvidence } from './bench/locomo/evidence.ts';
const samples = JSON.parse(readFileSync('/work/shared/data/locomo/locomo10.json', 'utf8'));
const key = readFileSync('/tmp/orgmem_bench_locomo.key', 'utf8');
const server = await startOrgmem({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/orgmem_bench_locomo', ORGMEM_EMBEDDER: 'local' }, 18933);
const qs = samples.flatMap((s: any) => s.qa.filter((q: any) => q.category <= 4).map((q: any) => ({ c: s.sample_id, q: q.question, cat: q.category, ev: normaliseEvidence(q.evidence ?? []) }))).filter((q: any) => q.ev.length);
const out: any[] = [];
await pool(qs, 4, async (q: any) => {
  const lists: any = {};
  for (const mode of ['vector', 'text']) {
    const r = await api(server.url, key, 'POST', `/v1/memory/collections/${q.c}/search`, { query: q.q, mode, limit: 50, min_score: 0 });
    lists[mode] = r.body.results.map((x: any) => [x.metadata.dia_id, x.score]);
  }
  out.push({ ...q, ...lists });
});
writeFileSync('/tmp/search-scratch/lists.json', JSON.stringify(out));
await server.stop();

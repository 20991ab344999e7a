import { readFileSync } from 'node:fs';
import { api, startOrgmem } from './bench/lib/server.ts';
import { pool } from './bench/lib/stats.ts';
const qs = JSON.parse(readFileSync('/tmp/search-scratch/lists.json', 'utf8'));
const key = readFileSync('/tmp/orgmem_bench_locomo.key', 'utf8');
for (const [b, k1] of [[0.75, 1.2], [0.4, 1.2], [0.2, 1.2], [0.4, 0.6]]) {
  const server = await startOrgmem({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/orgmem_bench_locomo', ORGMEM_EMBEDDER: 'hash', ORGMEM_EMBEDDINGS_DIMENSIONS: '512', EXP_B: String(b), EXP_K1: String(k1) }, 18934);
  const tot = [0, 0, 0, 0];
  await pool(qs, 4, async (q: any) => {
    const r = await api(server.url, key, 'POST', `/v1/memory/collections/${q.c}/search`, { query: q.q, mode: 'text', limit: 50 });
    const got = r.body.results.map((x: any) => x.metadata.dia_id);
    [5, 10, 25, 50].forEach((k, i) => (tot[i] += q.ev.filter((e: string) => got.slice(0, k).includes(e)).length / q.ev.length));
  });
  console.log(b, k1, tot.map((t) => Math.round((1000 * t) / qs.length) / 10));
  await server.stop();
}

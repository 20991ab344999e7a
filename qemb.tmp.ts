import { readFileSync, writeFileSync } from 'node:fs';
import { localUseEmbedder } from './src/ports/embedder/local-use.ts';
const qs = JSON.parse(readFileSync('/tmp/search-scratch/lists.json', 'utf8'));
const e = localUseEmbedder();
const vecs = await e.embed(qs.map((q: any) => q.q));
writeFileSync('/tmp/search-scratch/qemb.json', JSON.stringify(vecs.map((v) => Array.from(v, (x) => Math.round(x * 1e6) / 1e6))));

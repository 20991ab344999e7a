import { startServer } from './test/support/server.ts';
import { newTenant } from './test/support/client.ts';
import { memories } from './bench/search/corpus.ts';
process.env.TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const s = await startServer({ ORGMEM_EMBEDDER: 'hash' });
const t = await newTenant(s.url, s.adminKey);
const all = [...memories(3000, 5)];
const t0 = performance.now();
for (let i = 0; i < all.length; i += 100) {
  const r = await t.api('POST', '/v1/memory/collections/x/memories/bulk', all.slice(i, i + 100));
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
}
console.log('per s', Math.round(all.length / ((performance.now() - t0) / 1000)));
await s.close();

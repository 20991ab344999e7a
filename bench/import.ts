/**
 * Importing another store's file (docs/import.md): a mem0 `get_all` dump of N memories over REST,
 * then the same file again, when every record is found already imported and nothing is embedded
 * or stored. The hash embedder, so the figures are the import's own work (parsing, validation,
 * the source-id lookups, inserts), not a model's.
 *
 *   npm run build:js && node --import tsx bench/import.ts [--records 20000] [--port 8098]
 *
 * Needs PostgreSQL with pgvector at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { parseArgs } from 'node:util';
import { api, createDatabase, createTenantKey, dropDatabase, startOrgmem } from './lib/server.ts';
import { round } from './lib/stats.ts';

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '20000' }, port: { type: 'string', default: '8098' } } });
const RECORDS = Number(args.records);
const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NAME = 'orgmem_bench_import';

const env = { DATABASE_URL: await createDatabase(base, NAME, true), ORGMEM_EMBEDDER: 'hash', ORGMEM_DATA_DIR: '/tmp/orgmem-bench-import' };
const server = await startOrgmem(env, Number(args.port));
try {
  const key = createTenantKey(env, 'bench-import');
  const results = Array.from({ length: RECORDS }, (_, i) => ({
    id: `bench-${i}`,
    memory: `Benchmark fact number ${i}: the user mentioned item ${i % 97} on day ${i % 365}`,
    user_id: `user-${i % 50}`,
    agent_id: `agent-${i % 5}`,
    categories: ['bench'],
    created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
  }));
  const body = { data: { results } };
  console.log(`| run | records | seconds | records/s | imported | already imported |\n|---|---|---|---|---|---|`);
  for (const run of ['first import', 'the same file again']) {
    const t0 = performance.now();
    let res = await api(server.url, key, 'POST', '/v1/memory/admin/import', body);
    if (res.status !== 202) throw new Error(`import answered ${res.status}: ${JSON.stringify(res.body)}`);
    // The import's job stores it: timed until its status says done.
    while (res.body.state === 'queued' || res.body.state === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      res = await api(server.url, key, 'GET', `/v1/memory/admin/import/${res.body.import_id}`);
    }
    const s = (performance.now() - t0) / 1000;
    if (res.body.state !== 'done') throw new Error(`the import failed: ${res.body.error}`);
    console.log(`| ${run} | ${RECORDS} | ${round(s, 2)} | ${round(RECORDS / s, 0)} | ${res.body.imported} | ${res.body.already_imported} |`);
  }
} finally {
  await server.stop();
  await dropDatabase(base, NAME);
}

/**
 * What a tenant's own database costs a request: the first request after the config (the process
 * opens a pool on that database: connection, and the schema check that migrates it when needed)
 * against the later ones, and a tenant on the platform database beside them. Each tenant gets a
 * fresh database of its own on the same PostgreSQL server (so the network is the loopback's).
 *
 *   npm run build:js && node --import tsx bench/tenant-db.ts [--tenants 10] [--requests 200] [--port 8097]
 *
 * Needs PostgreSQL with pgvector at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { parseArgs } from 'node:util';
import { api, createDatabase, createTenantKey, dropDatabase, startOrgmem } from './lib/server.ts';
import { percentile, round } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: { tenants: { type: 'string', default: '10' }, requests: { type: 'string', default: '200' }, port: { type: 'string', default: '8097' } },
});
const TENANTS = Number(args.tenants);
const REQUESTS = Number(args.requests);
const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const platformUrl = await createDatabase(base, 'orgmem_bench_tdb_platform', true);
const env = { DATABASE_URL: platformUrl, ORGMEM_EMBEDDER: 'hash', ORGMEM_DATA_DIR: '/tmp/orgmem-bench-tdb' };
const server = await startOrgmem(env, Number(args.port));
const own: string[] = [];
const ms = async (f: () => Promise<{ status: number }>) => {
  const t0 = performance.now();
  const res = await f();
  if (res.status >= 300) throw new Error(`unexpected ${res.status}`);
  return performance.now() - t0;
};
const list = (key: string) => () => api(server.url, key, 'GET', '/v1/memory/collections');

try {
  const first: number[] = [];
  const later: number[] = [];
  const platform: number[] = [];
  const platformKey = createTenantKey(env, 'bench-platform');
  await api(server.url, platformKey, 'POST', '/v1/memory/collections/notes/memories', { text: 'on the platform' });
  for (let i = 0; i < TENANTS; i++) {
    const name = `orgmem_bench_tdb_own_${i}`;
    own.push(name);
    const key = createTenantKey(env, `bench-own-${i}`);
    const put = await api(server.url, key, 'PUT', '/v1/memory/database/config', { connection_string: await createDatabase(base, name, true) });
    if (put.status !== 200) throw new Error(`PUT: ${JSON.stringify(put.body)}`);
    // The PUT's self-test closed its pool: this request opens the process's pool on the database.
    first.push(await ms(list(key)));
    await api(server.url, key, 'POST', '/v1/memory/collections/notes/memories', { text: 'in my own database' });
    for (let r = 0; r < REQUESTS / TENANTS; r++) {
      later.push(await ms(list(key)));
      platform.push(await ms(list(platformKey)));
    }
  }
  const row = (what: string, s: number[]) =>
    `| ${what} | ${s.length} | ${round(percentile(s, 50), 2)} | ${round(percentile(s, 95), 2)} | ${round(Math.max(...s), 2)} |`;
  console.log('| request | n | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|');
  console.log(row("first request after the config (opens the tenant's pool), GET /v1/memory/collections", first));
  console.log(row('later requests, own database', later));
  console.log(row('the same reads, a tenant on the platform database', platform));
} finally {
  await server.stop();
  for (const name of own) await dropDatabase(base, name);
  await dropDatabase(base, 'orgmem_bench_tdb_platform');
}

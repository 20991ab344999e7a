/**
 * What people, teams and scopes cost the calls every agent makes (docs/people.md), on PostgreSQL:
 * authentication now reads the person a key acts for and their teams, and every check of a
 * collection reads its scope and the grants to people and teams besides the keys'.
 *
 *   npm run build:js && node --import tsx bench/people.ts [--n 100000] [--samples 1000] [--blocks 10] [--before DIR]
 *
 * One tenant holds `--n` memories in an org collection, 100 more org collections, 20 teams with 3
 * team collections each, and 20 personal collections of other people (50 memories each); one
 * person is in 3 teams and has a key that acts for them. The same hybrid searches over all
 * collections (limit 10) and collection listings are answered in alternating blocks, one at a
 * time: by a key of no person and by the person's key, and, with `--before` (a checkout of the
 * commit before people, built), by that build's server on the same database with the key of no
 * person. p50 and p95 of the HTTP latency each way.
 *
 * Results: bench/results/people-<n>.json.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { bulkLoad, type LoadSet } from './lib/load.ts';
import { api, createDatabase, createTenantKey, startOrgmem, type RunningServer } from './lib/server.ts';
import { percentile, round } from './lib/stats.ts';
import { queries } from './search/corpus.ts';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '100000' },
    samples: { type: 'string', default: '1000' },
    blocks: { type: 'string', default: '10' },
    before: { type: 'string' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    port: { type: 'string', default: '18961' },
  },
});
const N = Number(args.n);
const SAMPLES = Number(args.samples);
const BLOCKS = Number(args.blocks);
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const dbUrl = await createDatabase(args.base!, `orgmem_bench_people_${N}`, true);
const env = { DATABASE_URL: dbUrl, ORGMEM_EMBEDDER: 'hash', ORGMEM_RATE_LIMIT: 'false' };
const after = await startOrgmem(env, Number(args.port), { worker: true });
let before: RunningServer | null = null;
// A failure stops the servers too: one left running holds the port of the next run.
process.on('uncaughtException', (err) => {
  console.error(err);
  void Promise.all([after.stop(), before?.stop()]).then(() => process.exit(1));
});
const key = createTenantKey(env, 'bench', 'enterprise');
const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
const [keyRow] = await sql<Array<{ tenant_id: string }>>`select tenant_id from api_keys where key_hash = ${createHash('sha256').update(key).digest('hex')}`;
const tenant = keyRow!.tenant_id;

// The organization: people and teams as a sign-in leaves them (the sign-in itself is not measured).
const id = () => crypto.randomUUID();
const me = id();
const others = Array.from({ length: 20 }, id);
const teams = Array.from({ length: 20 }, id);
await sql`insert into people (tenant_id, id, email, role, state) values (${tenant}, ${me}, 'me@bench.local', 'member', 'active')`;
for (const [i, p] of others.entries())
  await sql`insert into people (tenant_id, id, email, role, state) values (${tenant}, ${p}, ${`p${i}@bench.local`}, 'member', 'active')`;
for (const [i, t] of teams.entries()) await sql`insert into teams (tenant_id, id, name) values (${tenant}, ${t}, ${`team ${i}`})`;
for (const t of teams.slice(0, 3)) await sql`insert into team_members (tenant_id, team_id, person_id) values (${tenant}, ${t}, ${me})`;
const token = `mvs_${randomBytes(32).toString('base64url')}`;
await sql`insert into person_sessions (token_hash, tenant_id, person_id, csrf, expires_at)
          values (${createHash('sha256').update(token).digest('hex')}, ${tenant}, ${me}, 'bench', now() + interval '1 day')`;
const personKey = (await api<{ api_key: string }>(after.url, token, 'POST', '/v1/memory/keys', { label: 'my agent' })).body.api_key;

// Every collection is filled while open, then given its scope (the tenant's key reads no team's or person's).
const teamCollections = teams.flatMap((t, i) => [0, 1, 2].map((j) => ({ name: `team-${i}-${j}`, scope: { scope: 'team', teams: [t] } })));
const personal = others.map((p, i) => ({ name: `personal-${i}`, scope: { scope: 'personal', owner: p } }));
const small = (name: string, seed: number): LoadSet => ({ collection: name, count: 50, seed });
const sets: LoadSet[] = [
  { collection: 'main', count: N, seed: 1 },
  ...Array.from({ length: 100 }, (_, i) => small(`org-${i}`, 10 + i)),
  ...[...teamCollections, ...personal].map((c, i) => small(c.name, 200 + i)),
];
log(`loading ${sets.reduce((s, x) => s + x.count, 0)} memories`);
await bulkLoad(after.url, key, sets, 4, log);
for (const c of [...teamCollections, ...personal]) {
  const res = await api(after.url, key, 'PUT', `/v1/memory/collections/${c.name}`, c.scope);
  if (res.status !== 200) throw new Error(`scope of ${c.name}: ${res.status} ${JSON.stringify(res.body)}`);
}
await sql`analyze`;

const seen = { key: (await api<unknown[]>(after.url, key, 'GET', '/v1/memory/collections')).body.length, person: 0 };
seen.person = (await api<unknown[]>(after.url, personKey, 'GET', '/v1/memory/collections')).body.length;
log(`collections listed: ${seen.key} by the key of no person, ${seen.person} by the person's key`);

// Both builds answer from servers without a worker, started alike: the loader's worker would still
// be busy with what the load queued.
await after.stop();
const measured = await startOrgmem(env, Number(args.port) + 2);
before = args.before ? await startOrgmem(env, Number(args.port) + 1, { root: args.before }) : null;
const ways: Array<{ name: string; url: string; key: string }> = [
  ...(before ? [{ name: 'before people, key', url: before.url, key }] : []),
  { name: 'key of no person', url: measured.url, key },
  { name: "person's key (3 teams)", url: measured.url, key: personKey },
];
const texts = queries(SAMPLES, 7);
const timed = async (w: (typeof ways)[number], method: string, path: string, body?: unknown) => {
  const started = performance.now();
  const res = await api(w.url, w.key, method, path, body);
  if (res.status !== 200) throw new Error(`${w.name} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return performance.now() - started;
};
const latency = Object.fromEntries(ways.map((w) => [w.name, { search: [] as number[], list: [] as number[] }]));
// A warm-up block each, then blocks in a rotating order so every way sees the same load.
for (const w of ways) for (const q of texts.slice(0, 50)) await timed(w, 'POST', '/v1/memory/search', { query: q, limit: 10 });
const per = Math.ceil(SAMPLES / BLOCKS);
for (let b = 0; b < BLOCKS; b++) {
  const order = ways.map((_, i) => ways[(i + b) % ways.length]!);
  for (const w of order) {
    for (const q of texts.slice(b * per, (b + 1) * per)) {
      latency[w.name]!.search.push(await timed(w, 'POST', '/v1/memory/search', { query: q, limit: 10 }));
      latency[w.name]!.list.push(await timed(w, 'GET', '/v1/memory/collections'));
    }
  }
  log(`block ${b + 1}/${BLOCKS}`);
}
const results = {
  n: N,
  at: new Date().toISOString(),
  collections: seen,
  ways: Object.fromEntries(
    Object.entries(latency).map(([name, l]) => [
      name,
      {
        search_p50: round(percentile(l.search, 50), 2),
        search_p95: round(percentile(l.search, 95), 2),
        list_p50: round(percentile(l.list, 50), 2),
        list_p95: round(percentile(l.list, 95), 2),
      },
    ]),
  ),
};
console.log(JSON.stringify(results, null, 2));
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/people-${N}.json`, JSON.stringify(results, null, 2));
await Promise.all([measured.stop(), before?.stop()]);
await sql.end();

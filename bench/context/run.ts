/**
 * The context endpoint on PostgreSQL (docs/context.md): duplicates in the top 10 before MMR (the
 * search order) and after it on a synthetic set of near-copy clusters, and the latency of
 * `POST C/context` at N memories, against a server started from dist/ (run `npm run build:js`
 * first) with the hash embedder.
 *
 *   node --import tsx bench/context/run.ts --n 10000
 *
 * `--db NAME --skip-load` measures on a database kept by an earlier run (`--keep`) or loaded by
 * bench/search/run.ts (`--load-only`, the same corpus), whose key is in /tmp/NAME.key, and keeps
 * it: before and after figures then come from the same rows.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { api, createDatabase, createTenantKey, dropDatabase, startOrgmem } from '../lib/server.ts';
import { round, summary } from '../lib/stats.ts';
import { memories, queries } from '../search/corpus.ts';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '10000' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    port: { type: 'string', default: '18951' },
    samples: { type: 'string', default: '200' },
    keep: { type: 'boolean', default: false },
    db: { type: 'string' },
    'skip-load': { type: 'boolean', default: false },
  },
});
const N = Number(args.n);
const dbName = args.db ?? `orgmem_bench_context_${N}`;
const load = !args['skip-load'];
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const env = { DATABASE_URL: await createDatabase(args.base!, dbName, load), ORGMEM_EMBEDDER: 'hash', ORGMEM_RATE_LIMIT: 'false' };
const server = await startOrgmem(env, Number(args.port));
try {
  const key = load ? createTenantKey(env, 'bench-context') : readFileSync(`/tmp/${dbName}.key`, 'utf8').trim();
  if (load) writeFileSync(`/tmp/${dbName}.key`, key);
  const post = async (path: string, body: unknown) => {
    const res = await api(server.url, key, 'POST', path, body);
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  // Ten decisions, each stored five times with a small change (a transcript saved again and again),
  // in a collection of their own, dropped after.
  const clusters = `clusters-${Date.now()}`;
  const subjects = [
    'launch date',
    'mobile rewrite',
    'browser support',
    'support hiring',
    'planning day',
    'database version',
    'price rise',
    'Berlin office',
    'security review',
    'data retention',
  ];
  const tails = ['', ' (noted)', ' Confirmed.', ' (from the meeting notes)', ' Agreed by all.'];
  const decision = (s: string) => `The team made a decision about the ${s}: it is settled for this quarter.`;
  await post(
    `/v1/memory/collections/${clusters}/memories/bulk`,
    subjects.flatMap((s) => tails.map((tail) => ({ text: decision(s) + tail }))),
  );
  const cluster = (text: string) => subjects.findIndex((s) => text.startsWith(decision(s)));
  const distinct = (texts: string[]) => new Set(texts.map(cluster)).size;
  const query = 'what did the team decide';
  const searched = (await post(`/v1/memory/collections/${clusters}/search`, { query, limit: 50 })).results.slice(0, 10).map((r: { text: string }) => r.text);
  const mmr: Record<string, number> = { search_order: distinct(searched) };
  for (const lambda of [1, 0.7, 0.5, 0.3, 0.1]) {
    const body = await post(`/v1/memory/collections/${clusters}/context`, { query, max_tokens: 4000, limit: 10, mmr_lambda: lambda });
    mmr[`lambda_${lambda}`] = distinct(body.query.memories.map((m: { text: string }) => m.text));
  }
  log(`distinct decisions in the top 10 (of 10): ${JSON.stringify(mmr)}`);

  await api(server.url, key, 'DELETE', `/v1/memory/collections/${clusters}`);

  if (load) {
    log(`loading ${N} memories`);
    const all = [...memories(N, 1)];
    for (let i = 0; i < all.length; i += 100) await post('/v1/memory/collections/main/memories/bulk', all.slice(i, i + 100));
    const pinned = await post('/v1/memory/collections/main/memories', { text: 'The company handbook is in the wiki.', category: 'fact' });
    await post(`/v1/memory/collections/main/memories/${pinned.id}/pin`, { pinned: true });
  }

  const samples: number[] = [];
  let overBudget = 0;
  for (const q of queries(Number(args.samples), 2)) {
    const started = performance.now();
    const body = await post('/v1/memory/collections/main/context', { query: q, max_tokens: 2000 });
    samples.push(performance.now() - started);
    if (body.tokens > 2000) overBudget++;
  }
  const s = summary(samples);
  log(
    `context at ${N} memories, max_tokens 2000, ${samples.length} distinct queries: p50 ${round(s.p50)} ms, p95 ${round(s.p95)} ms; over budget: ${overBudget}`,
  );
} finally {
  await server.stop();
  // A database this run did not load is never dropped.
  if (load && !args.keep) await dropDatabase(args.base!, dbName);
}

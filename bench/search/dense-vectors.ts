/**
 * A database of dense vectors for bench/search/vector-storage.ts: the hash embedder's vectors
 * are sparse (+-1 in the few buckets a sentence's words hash to), so their codes and their
 * graphs say little of what a real model's vectors do. Here the bundled model (USE-lite, 512-d)
 * embeds LoCoMo's dialogue turns and questions; each of the `n` memories is the sum of two
 * turns' vectors drawn at random (seeded), so the memories fill the space the model's sentences
 * span rather than repeating 5,882 points, and the questions, embedded on their own, are the
 * queries (table `dense_queries`, which vector-storage.ts --query-table reads).
 *
 *   node --import tsx bench/search/dense-vectors.ts /path/to/locomo10.json --db orgmem_dense_1m [--n 1000000]
 *   node --import tsx bench/search/vector-storage.ts --db orgmem_dense_1m --query-table dense_queries
 *
 * The rows are written by SQL, without the HNSW index (dropped: the first storage vector-storage.ts
 * applies builds it); one tenant, collection `main`. The data file is read where it lies;
 * nothing of it is copied into the project.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { toVectorLiteral } from '../../src/ports/db/db.ts';
import { closeLocalEmbedder, localUseEmbedder } from '../../src/ports/embedder/local-use.ts';
import { createDatabase, createTenantKey } from '../lib/server.ts';
import { round } from '../lib/stats.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    db: { type: 'string', default: 'orgmem_dense_1m' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    n: { type: 'string', default: '1000000' },
  },
});
const file = positionals[0];
if (!file) throw new Error('usage: bench/search/dense-vectors.ts /path/to/locomo10.json --db NAME [--n 1000000]');
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

interface Sample {
  conversation: Record<string, unknown>;
  qa: Array<{ question: string }>;
}
const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[];
const turns = samples.flatMap((s) =>
  Object.entries(s.conversation)
    .filter(([k, v]) => /^session_\d+$/.test(k) && Array.isArray(v))
    .flatMap(([, v]) => (v as Array<{ speaker: string; text: string }>).map((t) => `${t.speaker}: ${t.text}`)),
);
const questions = samples.flatMap((s) => s.qa.map((q) => q.question));

const dbUrl = await createDatabase(args.base!, args.db!, true);
// Float32 (vector), whatever the default: vector-storage.ts's exact answer is these vectors' own.
const env = { DATABASE_URL: dbUrl, ORGMEM_EMBEDDER: 'hash', ORGMEM_LOG_LEVEL: 'warn', ORGMEM_VECTOR_STORAGE: 'vector' };
execFileSync(process.execPath, ['bin/orgmem.js', 'migrate'], { env: { ...process.env, ...env }, stdio: 'inherit' });
createTenantKey(env, 'dense');
const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
try {
  const [{ tenant }] = (await sql`select id as tenant from tenants limit 1`) as unknown as [{ tenant: string }];
  const embedder = localUseEmbedder();
  const started = performance.now();
  const [turnVectors, questionVectors] = [await embedder.embed(turns), await embedder.embed(questions)];
  await closeLocalEmbedder();
  log(`embedded ${turns.length} turns and ${questions.length} questions in ${round((performance.now() - started) / 1000)} s`);

  await sql`create table dense_turns (i int primary key, v vector(512))`;
  await sql`create table dense_queries (i int primary key, v vector(512))`;
  for (const [table, vectors] of [
    ['dense_turns', turnVectors],
    ['dense_queries', questionVectors],
  ] as const) {
    for (let i = 0; i < vectors.length; i += 500) {
      const rows = vectors.slice(i, i + 500).map((v, j) => ({ i: i + j, v: toVectorLiteral(v) }));
      await sql`insert into ${sql(table)} ${sql(rows, 'i', 'v')}`;
    }
  }
  await sql`drop index if exists memories_embedding`;
  const n = Number(args.n);
  await sql`insert into collections (tenant_id, name, memory_count) values (${tenant}, 'main', ${n})`;
  const t0 = performance.now();
  // Two turns a memory, picked by a seeded draw (setseed makes random() repeatable in this session).
  await sql`select setseed(0.42)`;
  for (let from = 0; from < n; from += 100_000) {
    const count = Math.min(100_000, n - from);
    await sql.unsafe(
      `insert into memories (tenant_id, id, collection, text, embedding)
       select $1, gen_random_uuid(), 'main', 'dense ' || g, l2_normalize(a.v + b.v)
       from (select g, floor(random() * $2)::int as x, floor(random() * $2)::int as y from generate_series($3::int, $4::int) g) r
       join dense_turns a on a.i = r.x join dense_turns b on b.i = r.y`,
      [tenant, turns.length, from, from + count - 1],
    );
    log(`${from + count} memories (${round((performance.now() - t0) / 1000)} s)`);
  }
  await sql`vacuum analyze memories`;
} finally {
  await sql.end();
}

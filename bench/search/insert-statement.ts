/**
 * One bulk call's row statement, as this build sends it (INSERT_SQL: one array a column, 19
 * parameters) and as the build before sent it (a VALUES list of 18 parameters a row), under
 * EXPLAIN ANALYZE on a loaded database: planning and execution time of 100 rows, with the HNSW
 * index and without it (dropped in the same transaction), each run rolled back.
 *
 *   node --import tsx bench/search/insert-statement.ts --db NAME [--runs 8]
 *
 * The database is one that bench/search/run.ts (`--load-only`) or curve.ts loaded; the rows go to
 * the largest collection's tenant. Dropping the index locks the table for the run: not during a load.
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { CONNECTION_SETTINGS } from '../../src/ports/db/postgres.ts';
import { toVectorLiteral } from '../../src/ports/db/db.ts';
import { hashEmbedder } from '../../src/ports/embedder/hash.ts';
import { insertParams, insertSql } from '../../src/services/memory/memories.ts';
import { summary } from '../lib/stats.ts';
import { memories } from './corpus.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    runs: { type: 'string', default: '8' },
  },
});
const url = new URL(args.base!);
url.pathname = `/${args.db}`;
const sql = postgres(url.toString(), { max: 1, onnotice: () => {}, connection: CONNECTION_SETTINGS });
const [{ tenant_id, name }] = await sql<[{ tenant_id: string; name: string }]>`select tenant_id, name from collections order by memory_count desc limit 1`;
const ctx = { tenant: { id: tenant_id }, agent: { id: '', label: 'bench' } } as Parameters<typeof insertParams>[0];
const UNSCREENED = { trust: 'agent', held: false, quarantine: null } as const;
const items = [...memories(100, 4242)].map((m) => ({ ...m, source: 'api' }));
const embeddings = await hashEmbedder(512).embed(items.map((m) => m.text));

/** The statement before this build: a VALUES list, 18 parameters a row. */
function valuesStatement(): [string, unknown[]] {
  const params: unknown[] = [];
  const tuples = items.map((m, i) => {
    const at = params.length;
    params.push(tenant_id, crypto.randomUUID(), name, m.text, m.importance, m.category, m.source, m.metadata, m.container_tag, '', 'bench');
    params.push(toVectorLiteral(embeddings[i]!), null, false, false, [], null, null);
    const p = (k: number) => `$${at + k}`;
    return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}::jsonb, ${p(9)}, nullif(${p(10)}, '')::uuid, ${p(11)}, ${p(12)}::vector,
             ${p(13)}::timestamptz, ${p(14)}, ${p(15)}, ${p(16)}::jsonb, coalesce(${p(17)}::timestamptz, now()), coalesce(${p(18)}::timestamptz, ${p(17)}::timestamptz, now()))`;
  });
  const text = `insert into memories (tenant_id, id, collection, text, importance, category, source, metadata, container_tag,
                created_by_id, created_by_label, embedding, valid_to, pinned, archived, images, observed_at, valid_from)
                values ${tuples.join(', ')} returning id`;
  return [text, params];
}

const statements: Record<string, () => [string, unknown[]]> = {
  'values (before)': valuesStatement,
  'unnest (this build)': () => [
    insertSql('vector'),
    insertParams(
      ctx,
      name,
      items,
      embeddings,
      items.map(() => UNSCREENED),
      true,
    ).params,
  ],
};
const times: Record<string, { planning: number[]; execution: number[]; without_hnsw: number[] }> = {};

async function explain(label: string, withoutIndex: boolean) {
  const [text, params] = statements[label]!();
  await sql
    .begin(async (tx) => {
      if (withoutIndex) await tx`drop index memories_embedding`;
      const [row] = await tx.unsafe(`explain (analyze, format json) ${text}`, params as never[], { prepare: true });
      const plan = (row as unknown as { 'QUERY PLAN': Array<{ 'Planning Time': number; 'Execution Time': number }> })['QUERY PLAN'][0]!;
      const t = (times[label] ??= { planning: [], execution: [], without_hnsw: [] });
      if (withoutIndex) t.without_hnsw.push(plan['Execution Time']);
      else {
        t.planning.push(plan['Planning Time']);
        t.execution.push(plan['Execution Time']);
      }
      throw new Rollback();
    })
    .catch((err) => {
      if (!(err instanceof Rollback)) throw err;
    });
}
class Rollback extends Error {}

for (let run = 0; run < Number(args.runs); run++) {
  // In turn, each first every other run.
  const order = Object.keys(statements);
  if (run % 2) order.reverse();
  for (const withoutIndex of [false, true]) for (const label of order) await explain(label, withoutIndex);
}
for (const [label, t] of Object.entries(times)) {
  console.log(
    JSON.stringify({
      statement: label,
      rows: items.length,
      planning_ms: summary(t.planning),
      execution_ms: summary(t.execution),
      without_hnsw_ms: summary(t.without_hnsw),
    }),
  );
}
await sql.end();

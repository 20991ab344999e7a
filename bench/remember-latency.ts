/**
 * Remember (sync) latency beyond the LLM's own time.
 *
 *   npx tsx bench/remember-latency.ts [--n 100] [--delay 200] [--embedder local|hash]
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/orgmem_test npx tsx bench/remember-latency.ts
 *
 * A real server (PGlite, or a fresh PostgreSQL database with TEST_DATABASE_URL) talks to the fake
 * OpenAI-compatible server of the tests, which answers every call after a fixed delay. Each
 * remember is timed end to end over HTTP; the LLM's share is the sum of the latencies the service
 * itself recorded for that remember's calls (llm_usage.latency_ms, measured around each HTTP call
 * to the LLM). Overhead = end-to-end - LLM time: embedding, neighbour search, the writes, HTTP.
 */
import { parseArgs } from 'node:util';
import { extractBySentence, oracleJudge } from '../test/fakes/memory-llm.ts';
import { startFakeLlm } from '../test/fakes/openai.ts';
import { newTenant } from '../test/support/client.ts';
import { startServer } from '../test/support/server.ts';

const { values } = parseArgs({
  options: { n: { type: 'string', default: '100' }, delay: { type: 'string', default: '200' }, embedder: { type: 'string', default: 'local' } },
});
const N = Number(values.n);
const DELAY = Number(values.delay);

const PEOPLE = ['Ana', 'Ben', 'Cleo', 'Dan', 'Eva', 'Finn', 'Gia', 'Hana', 'Ivan', 'Jade'];
const FACTS = [
  (p: string, i: number) => `${p} lives in city ${i % 7}.`,
  (p: string, i: number) => `${p} likes dish number ${i % 5}.`,
  (p: string, i: number) => `${p} works on project ${i % 9}.`,
  (p: string, i: number) => `${p}'s manager is person ${i % 4}.`,
];
/** One to three sentences about one person: repeats and changes arise as the corpus grows. */
const content = (i: number) => {
  const p = PEOPLE[i % PEOPLE.length]!;
  return Array.from({ length: 1 + (i % 3) }, (_, k) => FACTS[(i + k) % FACTS.length]!(p, i + k)).join(' ');
};

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(1)}  p95 ${pct(xs, 0.95).toFixed(1)}  mean ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1)}`;

const fake = await startFakeLlm();
fake.on('extract_facts', async (call) => ({ ...(await extractBySentence(call)), delayMs: DELAY }));
const judge = oracleJudge(new Map());
fake.on('judge_facts', async (call) => ({ ...(await judge(call)), delayMs: DELAY }));
const server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'bench-model', ORGMEM_EMBEDDER: values.embedder! });
try {
  const t = await newTenant(server.url, server.adminKey);
  const llmLatencies = async () =>
    (await server.app.db.query<{ ms: number }>('select latency_ms as ms from llm_usage where tenant_id = $1 order by at, id', [t.id])).map((r) => r.ms);
  for (let i = 0; i < 5; i++) await t.api('POST', `/v1/memory/collections/warmup/remember?sync=true`, { content: content(i) });

  const e2e: number[] = [];
  const llm: number[] = [];
  const overhead: number[] = [];
  const calls: number[] = [];
  let seen = (await llmLatencies()).length;
  for (let i = 0; i < N; i++) {
    const started = performance.now();
    const res = await t.api('POST', `/v1/memory/collections/bench/remember?sync=true`, { content: content(i) });
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`remember failed: ${res.status} ${JSON.stringify(res.body)}`);
    const all = await llmLatencies();
    const mine = all.slice(seen);
    seen = all.length;
    const llmMs = mine.reduce((a, b) => a + b, 0);
    e2e.push(ms);
    llm.push(llmMs);
    overhead.push(ms - llmMs);
    calls.push(mine.length);
  }
  console.log(`remember?sync=true, ${N} calls, ${server.app.db.kind}, embedder ${server.app.embedder.name}, fake LLM delay ${DELAY} ms per call`);
  console.log(`  LLM calls per remember: mean ${(calls.reduce((a, b) => a + b, 0) / N).toFixed(2)}`);
  console.log(`  end to end (ms):        ${fmt(e2e)}`);
  console.log(`  LLM time (ms):          ${fmt(llm)}`);
  console.log(`  beyond the LLM (ms):    ${fmt(overhead)}`);
} finally {
  await server.close();
  await fake.close();
}

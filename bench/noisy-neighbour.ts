/**
 * Noisy neighbours: well-behaved tenants doing normal work while one tenant misbehaves, and what
 * the well-behaved ones see of it (docs/architecture.md, "Jobs"; bench/README.md has the figures).
 *
 *   npm run build:js
 *   node --import tsx bench/noisy-neighbour.ts [--db embedded|postgres] [--scenario NAME|all] [--seconds 60] [--tenants 20]
 *
 * Each scenario runs on a fresh database (a data directory, or with --db postgres a database of its
 * own beside BENCH_DATABASE_URL) with `orgmem serve` as a child process running its worker (4 jobs
 * at a time, the default) and the hash embedder. Every well-behaved tenant has a webhook to a
 * receiver that answers at once and loops over writes, searches, async remembers (no LLM: the
 * heuristics), async file drops and small imports, a think time apart. A job's latency is from the
 * answer that queued it to the poll that sees it done (polled every 200 ms), or, for a webhook,
 * from the write's answer to the event's arrival. The neighbour, from the start of the run:
 *
 * - hanging-webhook: a webhook whose receiver accepts and never answers; 100 memories every 5 s.
 * - refusing-webhook: a webhook at a closed port; the same writes.
 * - slow-llm: its own LLM endpoint answering each extraction after 25 s; 20 remembers, then 5 every 5 s.
 * - large-drop: a 9.9 MB text file dropped (sync), again as soon as the last one is answered.
 * - large-import: one import of 100,000 records.
 *
 * Prints one JSON line per scenario and a markdown table at the end (also written to bench/results/).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startFakeLlm } from '../test/fakes/openai.ts';
import { startReceiver } from '../test/fakes/webhook-receiver.ts';
import { createDatabase, createTenantKey, dropDatabase, startOrgmem } from './lib/server.ts';
import { percentile, rng, round } from './lib/stats.ts';

const SCENARIOS = ['quiet', 'hanging-webhook', 'refusing-webhook', 'slow-llm', 'large-drop', 'large-import'] as const;
type Scenario = (typeof SCENARIOS)[number];

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    scenario: { type: 'string', default: 'all' },
    seconds: { type: 'string', default: '60' },
    tenants: { type: 'string', default: '20' },
    port: { type: 'string', default: '18480' },
  },
});
const DB = values.db === 'postgres' ? 'postgres' : 'embedded';
const SECONDS = Number(values.seconds);
const TENANTS = Number(values.tenants);
const PORT = Number(values.port);
const BASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const chosen: Scenario[] = values.scenario === 'all' ? [...SCENARIOS] : [values.scenario as Scenario];
for (const s of chosen) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}; one of ${SCENARIOS.join(', ')}`);

const THINK_MS = 400;
const POLL_MS = 200;

interface Samples {
  api: number[];
  jobs: Record<'remember' | 'drop' | 'import' | 'webhook', number[]>;
  errors: number;
}

async function request(url: string, key: string, method: string, path: string, body?: unknown, form?: FormData) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: form ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const WORDS = ['harbour', 'invoice', 'deploy', 'Lisbon', 'coffee', 'review', 'budget', 'sprint', 'printer', 'contract', 'roadmap', 'lunch'];
const sentence = (r: ReturnType<typeof rng>) =>
  `${r.pick(['Ana', 'Ben', 'Cleo', 'Dan'])} noted the ${r.pick(WORDS)} and the ${r.pick(WORDS)} on day ${r.int(365)}.`;
const textFile = (name: string, text: string) => {
  const form = new FormData();
  form.append('files', new Blob([text], { type: 'text/plain' }), name);
  return form;
};

/** One well-behaved tenant's loop until `until`; its jobs are polled to completion by `track`. */
async function wellBehaved(url: string, key: string, seed: number, until: number, samples: Samples, written: Map<string, number>) {
  const r = rng(seed);
  const pending: Promise<void>[] = [];
  const timed = async (method: string, path: string, body?: unknown, form?: FormData) => {
    const started = performance.now();
    const res = await request(url, key, method, path, body, form);
    samples.api.push(performance.now() - started);
    if (res.status >= 400) samples.errors++;
    return res;
  };
  const track = (kind: 'remember' | 'drop' | 'import', path: string, done: (b: any) => boolean) => {
    const queued = performance.now();
    pending.push(
      (async () => {
        for (;;) {
          await new Promise((res) => setTimeout(res, POLL_MS));
          const status = await request(url, key, 'GET', path);
          if (status.status === 200 && done(status.body)) return void samples.jobs[kind].push(performance.now() - queued);
          if (performance.now() > until + 120_000) return void samples.errors++;
        }
      })(),
    );
  };
  const ops = ['write', 'search', 'remember', 'write', 'search', 'drop', 'write', 'search', 'import', 'search'] as const;
  for (let i = 0; performance.now() < until; i++) {
    const op = ops[i % ops.length]!;
    if (op === 'write') {
      const res = await timed('POST', '/v1/memory/collections/notes/memories', { text: sentence(r) });
      if (res.status === 201) written.set(res.body.id, performance.now());
    } else if (op === 'search') {
      await timed('POST', '/v1/memory/collections/notes/search', { query: r.pick(WORDS), limit: 10 });
    } else if (op === 'remember') {
      const res = await timed('POST', '/v1/memory/collections/chat/remember', { content: `${sentence(r)} Ana prefers ${r.pick(WORDS)}.` });
      if (res.status === 202) track('remember', `/v1/memory/extract/job/${res.body.job_id}`, (b) => b.state === 'done' || b.state === 'failed');
    } else if (op === 'drop') {
      const res = await timed(
        'POST',
        '/v1/memory/collections/files/drop?async_ingest=true',
        undefined,
        textFile(`n${i}.txt`, `${sentence(r)}\n${sentence(r)}`),
      );
      if (res.status === 202) track('drop', `/v1/memory/ingest/batch/${res.body.batch_id}`, (b) => b.complete);
    } else {
      const memories = Array.from({ length: 20 }, () => ({ collection: 'imported', text: sentence(r) }));
      const res = await timed('POST', '/v1/memory/admin/import', { memories });
      if (res.status === 202) track('import', `/v1/memory/admin/import/${res.body.import_id}`, (b) => b.state === 'done' || b.state === 'failed');
    }
    await new Promise((res) => setTimeout(res, THINK_MS * (0.5 + r.next())));
  }
  await Promise.all(pending);
}

/** The misbehaving tenant, until `until`. */
async function neighbour(scenario: Scenario, url: string, key: string, until: number, fakes: { hang: string; llm: string; closed: number }) {
  const r = rng(7);
  const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
  const floodWrites = async () => {
    for (let round = 0; performance.now() < until; round++) {
      await request(
        url,
        key,
        'POST',
        '/v1/memory/collections/flood/memories/bulk',
        Array.from({ length: 100 }, () => ({ text: sentence(r) })),
      );
      if (round >= 2) await sleep(5_000);
    }
  };
  if (scenario === 'hanging-webhook') {
    await request(url, key, 'PUT', '/v1/memory/webhook/config', { url: fakes.hang });
    await floodWrites();
  } else if (scenario === 'refusing-webhook') {
    await request(url, key, 'PUT', '/v1/memory/webhook/config', { url: `http://127.0.0.1:${fakes.closed}/hooks` });
    await floodWrites();
  } else if (scenario === 'slow-llm') {
    const put = await request(url, key, 'PUT', '/v1/memory/extraction/config', { provider: 'custom', base_url: fakes.llm, model: 'slow' });
    if (put.status !== 200) throw new Error(`extraction config: ${put.status} ${JSON.stringify(put.body)}`);
    for (let round = 0; performance.now() < until; round++) {
      for (let i = 0; i < (round === 0 ? 20 : 5); i++) await request(url, key, 'POST', '/v1/memory/collections/slow/remember', { content: sentence(r) });
      await sleep(5_000);
    }
  } else if (scenario === 'large-drop') {
    const line = 'The quarterly harbour report lists every invoice, budget line and contract review in order. ';
    const text = line.repeat(Math.floor((9.9 * 1024 * 1024) / line.length));
    while (performance.now() < until) await request(url, key, 'POST', '/v1/memory/collections/big/drop', undefined, textFile('big.txt', text));
  } else if (scenario === 'large-import') {
    const memories = Array.from({ length: 100_000 }, (_, i) => ({ collection: 'bulk', text: `${sentence(r)} Record ${i}.` }));
    const res = await request(url, key, 'POST', '/v1/memory/admin/import', { memories });
    if (res.status !== 202) throw new Error(`large import: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

async function run(scenario: Scenario) {
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-noisy-'));
  const dbName = `orgmem_bench_noisy_${process.pid}`;
  const env: Record<string, string> = {
    ORGMEM_DATA_DIR: join(dir, 'data'),
    ORGMEM_EMBEDDER: 'hash',
    ORGMEM_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    ORGMEM_WORKER_CONCURRENCY: '4',
    HOME: dir,
  };
  if (DB === 'postgres') env.DATABASE_URL = await createDatabase(BASE, dbName, true);
  const good = await startReceiver(() => 204);
  const hang = await startReceiver(() => 'hang');
  const llm = await startFakeLlm();
  llm.on('extract_facts', () => ({ json: { facts: [] }, delayMs: 25_000 }));
  const closed = await closedPort();
  const admin = createTenantKey(env, 'operator', 'enterprise', true);
  const server = await startOrgmem(env, PORT, { worker: true });
  try {
    const keys: string[] = [];
    for (let i = 0; i <= TENANTS; i++) {
      const res = await request(server.url, admin, 'POST', '/v1/memory/admin/tenants', { name: `t${i}`, email: `t${i}@bench.local`, tier: 'enterprise' });
      if (res.status !== 201) throw new Error(`create tenant: ${res.status} ${JSON.stringify(res.body)}`);
      keys.push(res.body.api_key);
    }
    const [noisyKey, ...quietKeys] = keys;
    for (const key of quietKeys) await request(server.url, key, 'PUT', '/v1/memory/webhook/config', { url: good.url });

    const samples: Samples = { api: [], jobs: { remember: [], drop: [], import: [], webhook: [] }, errors: 0 };
    const written = new Map<string, number>();
    const until = performance.now() + SECONDS * 1000;
    const noisy = scenario === 'quiet' ? Promise.resolve() : neighbour(scenario, server.url, noisyKey!, until, { hang: hang.url, llm: llm.url, closed });
    await Promise.all([...quietKeys.map((key, i) => wellBehaved(server.url, key, i + 1, until, samples, written)), noisy]);
    // Webhook latency: from the write's answer to the event's arrival at the receiver.
    for (const got of good.received) {
      const event = JSON.parse(got.body) as { type: string; data: { memory: { id: string } } };
      const at = written.get(event.data.memory.id);
      if (event.type === 'memory.created' && at !== undefined) samples.jobs.webhook.push(got.at - (performance.timeOrigin + at));
    }
    const jobsAll = Object.values(samples.jobs).flat();
    const result = {
      scenario,
      db: DB,
      seconds: SECONDS,
      tenants: TENANTS,
      api: { n: samples.api.length, p50: round(percentile(samples.api, 50)), p95: round(percentile(samples.api, 95)) },
      jobs: { n: jobsAll.length, p50: round(percentile(jobsAll, 50)), p95: round(percentile(jobsAll, 95)) },
      by_kind: Object.fromEntries(
        Object.entries(samples.jobs).map(([k, xs]) => [k, { n: xs.length, p50: round(percentile(xs, 50)), p95: round(percentile(xs, 95)) }]),
      ),
      errors: samples.errors,
    };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await server.stop();
    await Promise.all([good.close(), hang.close(), llm.close()]);
    if (DB === 'postgres') await dropDatabase(BASE, dbName);
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [];
for (const scenario of chosen) results.push(await run(scenario));
const quiet = results.find((r) => r.scenario === 'quiet');
const ratio = (x: number, q: number | undefined) => (q ? `${round(x / q, 2)}x` : '');
const table = [
  `| ${DB} | API p50 / p95 (ms) | job p50 / p95 (ms) | job p95 / quiet | API p95 / quiet | remember / drop / import / webhook p95 (ms) | errors |`,
  '|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.scenario} | ${r.api.p50} / ${r.api.p95} | ${r.jobs.p50} / ${r.jobs.p95} | ${ratio(r.jobs.p95, quiet?.jobs.p95)} | ${ratio(r.api.p95, quiet?.api.p95)} | ` +
      `${r.by_kind.remember!.p95} / ${r.by_kind.drop!.p95} / ${r.by_kind.import!.p95} / ${r.by_kind.webhook!.p95} | ${r.errors} |`,
  ),
].join('\n');
console.log(`\n${table}`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/noisy-neighbour-${DB}-${Date.now()}.json`, JSON.stringify(results, null, 2));

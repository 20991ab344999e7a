/**
 * Fault-and-load run: two API processes (`orgmem serve --no-worker`) and one worker (`orgmem
 * worker`) on PostgreSQL, as separate child processes, under a mixed workload for a fixed time,
 * while the worker and one API process at a time are killed with SIGKILL at random moments and
 * started again. Then, once the job queue has drained (bounded wait), the invariants:
 *
 * - every acknowledged write (2xx) is there exactly once, under the id it was acknowledged with:
 *   single creates, every item of a bulk create, the raw memory and job of a remember; an
 *   acknowledged delete is gone. A write without an answer is never retried (the API has no
 *   idempotency key); it may have landed, but at most once, and a bulk all or nothing;
 * - an import is sent with an Idempotency-Key and again, same key and body, after no answer or a
 *   409: each of its items is stored once, and all of them once it is acknowledged;
 * - a sync drop records its batch before reading its files: every file in the store is a row of
 *   a batch, and every row ended done (its chunks stored once) or failed, including the files of
 *   drops cut short by a kill (ingested by the worker ORGMEM_SYNC_DROP_RESUME_SECONDS later);
 * - every remember job ended done or failed (none left queued or processing), and a done job's
 *   facts are stored once each (each remembered text has a unique marker, so any repeated fact
 *   is a duplicate written by a job run twice);
 * - caches and rate limits agree across the processes: a query cached by one process shows a
 *   write made through the other at once (probes during the load and after it), a key's rate
 *   limit is one count across both, and a key revoked through one is refused by the other.
 *
 * On a Citus cluster (BENCH_DATABASE_URL on the coordinator of scripts/citus-cluster.sh), the
 * database is made a database of the cluster, and two more faults run during the load
 * (bench/fault-load/citus.ts): with --citus-stop-seconds S, at a quarter of the load, the worker
 * holding the most tenants (not all: if they all hashed to one worker, one is moved to another
 * before the load) is stopped for S seconds and started again; with
 * --citus-add-node PORT, at half the load, that instance (`scripts/citus-cluster.sh spare PORT`)
 * is added as a worker and the shards are rebalanced onto it (block_writes) while requests run
 * (78 s at a load average of 18: give the load time for it, --seconds 240). The clients then
 * belong to --tenants tenants (client i to tenant i modulo the count), and one invariant becomes
 * two: no 5xx but 503, and no 503 to a tenant whose shards were not on the stopped node.
 *
 * Clients: --clients concurrent loops (default 8), each operation on either API process at
 * random: creates 30 %, bulk creates (5-20 items) 10 %, searches 24 %, imports (100-600 items)
 * 3 %, sync drops (2-6 files) 3 %, remember jobs 17 %,
 * deletes of their own memories 6 %, cache probes 7 %. A request refused by a dead process is
 * sent to the other one, as a load balancer would (it never reached a process). The fake LLM
 * (test/fakes) answers extraction in 0.1-1 s and the worker runs 8 jobs at a time, so worker kills
 * land mid-job. Workers beat every second (ORGMEM_WORKER_HEARTBEAT_SECONDS=1; the default is 10),
 * so a killed worker's jobs are taken again within seconds rather than the default's 30 s.
 *
 *   node --import tsx bench/fault-load/run.ts [--seconds 60] [--clients 8] [--seed N] [--port 18201]
 *        [--drain-seconds 600] [--think-ms 20] [--db orgmem_faultload] [--tenants 1]
 *        [--citus-add-node PORT] [--citus-stop-seconds S]
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) is used to drop and
 * create the database --db, which is kept afterwards for inspection. Exits 1 when an
 * invariant fails, and then keeps the processes' logs (in a temp directory it prints).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { extractBySentence, oracleJudge } from '../../test/fakes/memory-llm.ts';
import { startFakeLlm } from '../../test/fakes/openai.ts';
import { citusWorkers, createDatabase, createTenantKey } from '../lib/server.ts';
import { rng } from '../lib/stats.ts';
import { addNodeAndRebalance, spreadTenants, startWorker, stopWorker, tenantNodes, type Outage, type Rebalance } from './citus.ts';
import { checkDatabase, checkRateLimit, checkRevocation, pendingJobs, type TenantLedger } from './invariants.ts';
import { OrgmemProcess } from './processes.ts';
import { Client, COLLECTIONS, Ledger } from './workload.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    clients: { type: 'string', default: '8' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    port: { type: 'string', default: '18201' },
    // On an idle machine the clients queue remember jobs faster than one worker runs them against
    // the fake LLM's 0.1-1 s replies, so the backlog takes minutes to drain.
    'drain-seconds': { type: 'string', default: '600' },
    'think-ms': { type: 'string', default: '20' },
    db: { type: 'string', default: 'orgmem_faultload' },
    tenants: { type: 'string', default: '1' },
    'citus-add-node': { type: 'string' },
    'citus-stop-seconds': { type: 'string' },
  },
});
const SECONDS = Number(args.seconds);
const CLIENTS = Number(args.clients);
const SEED = Number(args.seed);
const PORT = Number(args.port);
const TENANTS = Number(args.tenants);
if (TENANTS > CLIENTS) throw new Error('--tenants: at most one tenant a client');
const RATE_LIMIT = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const databaseUrl = await createDatabase(base, args.db!, true);
const citus = (await citusWorkers(databaseUrl)) !== null;
if (!citus && (args['citus-add-node'] || args['citus-stop-seconds']))
  throw new Error('--citus-add-node and --citus-stop-seconds need BENCH_DATABASE_URL on a Citus coordinator');
const dir = mkdtempSync(join(tmpdir(), 'orgmem-faultload-'));
const r = rng(SEED);
const llmDelay = rng(SEED + 1);

const fake = await startFakeLlm();
const judge = oracleJudge(new Map());
fake.on('extract_facts', (call) => ({ ...extractBySentence(call), delayMs: 100 + llmDelay.int(900) }));
fake.on('judge_facts', async (call) => ({ ...(await judge(call)), delayMs: 50 + llmDelay.int(250) }));

const unlimited = { max_memories: null, max_collections: null, max_storage_bytes: null };
const env: Record<string, string> = {
  DATABASE_URL: databaseUrl,
  ORGMEM_DATA_DIR: join(dir, 'data'),
  ORGMEM_EMBEDDER: 'hash',
  ORGMEM_MASTER_KEY: randomBytes(32).toString('base64'),
  ORGMEM_LLM_BASE_URL: fake.url,
  ORGMEM_LLM_MODEL: 'fake-model',
  ORGMEM_WORKER_HEARTBEAT_SECONDS: '1',
  // The files of a drop cut short by a kill are ingested by the worker 5 s later (600 s by default).
  ORGMEM_SYNC_DROP_RESUME_SECONDS: '5',
  // Enough jobs in flight that a worker kill interrupts several, and the queue keeps up with the load.
  ORGMEM_WORKER_CONCURRENCY: '8',
  ORGMEM_LOG_LEVEL: 'warn',
  // The load's tenant is never limited; the second one is, for the shared-limit check.
  ORGMEM_TIERS: JSON.stringify({
    enterprise: { rate_limit_per_minute: 1_000_000_000, ...unlimited },
    faultload_limited: { rate_limit_per_minute: RATE_LIMIT, ...unlimited },
  }),
};

// The CLI migrates the fresh database, before any of the processes races another to it.
const names = Array.from({ length: TENANTS }, (_, i) => (i ? `faultload-${i}` : 'faultload'));
const keys = names.map((name) => createTenantKey(env, name));
const key = keys[0]!;
const limitedKey = createTenantKey(env, 'faultload-limited', 'faultload_limited');
const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
const ids = new Map((await sql<{ id: string; name: string }[]>`select id::text, name from tenants where name = any(${names})`).map((t) => [t.name, t.id]));
const tenants: Array<TenantLedger & { name: string }> = names.map((name) => ({ name, id: ids.get(name)!, ledger: new Ledger() }));

const apiA = new OrgmemProcess('api-a', ['serve', '--no-worker', '--port', String(PORT)], env, dir, `http://127.0.0.1:${PORT}`);
const apiB = new OrgmemProcess('api-b', ['serve', '--no-worker', '--port', String(PORT + 1)], env, dir, `http://127.0.0.1:${PORT + 1}`);
const worker = new OrgmemProcess('worker', ['worker'], env, dir, null);
const apis = [{ url: apiA.url! }, { url: apiB.url! }] as [{ url: string }, { url: string }];

const kills: string[] = [];
let interrupted = 0;
/** Kills the worker or one API process 3-9 s after the last one is back, restarting it after 0.2-1.5 s. */
async function killLoop(deadline: number) {
  const started = Date.now();
  for (;;) {
    const wait = 3_000 + r.int(6_000);
    if (Date.now() + wait >= deadline) return;
    await sleep(wait);
    const target = r.next() < 0.5 ? worker : r.pick([apiA, apiB]);
    // Not counted while a Citus worker is down (a count over every shard needs every node).
    if (target === worker)
      interrupted += await sql<{ n: number }[]>`select count(*)::int as n from extraction_jobs where state = 'processing'`.then(
        (rows) => rows[0]!.n,
        () => 0,
      );
    await target.kill();
    const killedAt = Date.now();
    await sleep(200 + r.int(1_300));
    await target.start();
    kills.push(`${((killedAt - started) / 1000).toFixed(1)} s ${target.name} (back after ${((Date.now() - killedAt) / 1000).toFixed(1)} s)`);
  }
}

let rebalance: Rebalance | null = null;
let outage: Outage | null = null;
/**
 * The Citus faults: a worker stopped and started at a quarter of the load, then past half of it a
 * worker added and the shards rebalanced. In this order because the rebalancer (by disk size)
 * moves the shards holding data first: after it the run's few tenants may all be on the new node,
 * and a stop must leave some tenants up to show that they are not touched.
 */
async function citusFaults(t0: number, deadline: number) {
  const until = (at: number) => sleep(Math.max(0, at - Date.now()));
  const stop = Number(args['citus-stop-seconds'] ?? 0);
  if (stop) {
    await until(t0 + (deadline - t0) / 4);
    outage = await stopWorker(databaseUrl, [...ids.values()], stop);
  }
  const addNode = args['citus-add-node'];
  if (addNode) {
    await until(t0 + (deadline - t0) / 2);
    rebalance = await addNodeAndRebalance(databaseUrl, Number(addNode));
  }
}

let exitCode = 1;
try {
  await Promise.all([apiA.start(), apiB.start(), worker.start()]);
  const clients = Array.from({ length: CLIENTS }, (_, i) => new Client(i, apis, keys[i % TENANTS]!, tenants[i % TENANTS]!.ledger, SEED));
  // Every collection exists before the first fault, so a search never meets a missing one.
  for (const c of COLLECTIONS) for (const first of clients.slice(0, TENANTS)) await first.seed(c);
  await Promise.all(clients.map((c, i) => c.seed(`probe-${i}`)));
  if (args['citus-stop-seconds']) await spreadTenants(databaseUrl, [...ids.values()]);
  const placedBefore = citus ? await tenantNodes(sql, [...ids.values()]) : null;

  const t0 = Date.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all([killLoop(deadline), citusFaults(t0, deadline), ...clients.map((c) => c.run(deadline, Number(args['think-ms'])))]);
  const loadSeconds = (Date.now() - t0) / 1000;
  const ledgers = tenants.map((t) => t.ledger);
  const duringLoad = ledgers.map((l) => l.probes.length);

  const drainStart = Date.now();
  while ((await pendingJobs(sql)) > 0 && Date.now() - drainStart < Number(args['drain-seconds']) * 1000) await sleep(1_000);
  const drainSeconds = (Date.now() - drainStart) / 1000;

  // Quiet probes after the faults: every one must be conclusive.
  for (const c of clients) await c.probe();
  const rate = await checkRateLimit(apis, limitedKey, RATE_LIMIT);
  const revocation = await checkRevocation(apis, key);
  const f = await checkDatabase(sql, tenants, join(dir, 'data', 'files'));
  const placedAfter = citus ? await tenantNodes(sql, [...ids.values()]) : null;
  const queueLeft = (await sql<{ n: number }[]>`select count(*)::int as n from graphile_worker._private_jobs`)[0]!.n;

  const allProbes = ledgers.flatMap((l) => l.probes);
  const probes = { fresh: 0, stale: 0, inconclusive: 0, warm: 0 };
  for (const p of allProbes) {
    probes[p.outcome]++;
    if (p.warm) probes.warm++;
  }
  const quietInconclusive = ledgers.flatMap((l, i) => l.probes.slice(duringLoad[i])).filter((p) => p.outcome !== 'fresh').length;
  const acked = f.checked.creates + f.checked.bulkItems + f.checked.deletes + f.checked.remembers + f.checked.importItems;
  const imports = ledgers.flatMap((l) => l.imports);
  const retried = imports.filter((i) => i.sends > 1);
  const sum = (m: (l: Ledger) => number) => ledgers.reduce((n, l) => n + m(l), 0);
  const counted = (m: (l: Ledger) => Map<string | number, number>) => {
    const all = new Map<string | number, number>();
    for (const l of ledgers) for (const [k, n] of m(l)) all.set(k, (all.get(k) ?? 0) + n);
    return all;
  };
  const statuses = [...counted((l) => l.statuses)]
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([s, n]) => `${s === 0 ? 'no answer' : s}: ${n}`)
    .join(', ');
  // Set by citusFaults, which TypeScript does not follow from here.
  const o = outage as Outage | null;
  const rb = rebalance as Rebalance | null;
  // A 503 is the answer for a tenant whose node is down (docs/citus.md); every other 5xx is a fault of the service.
  const down = (t: TenantLedger) => !!o?.tenants.has(t.id);
  const not503 = tenants.flatMap((t) => t.ledger.serverErrors.filter((e) => e.status !== 503));
  const misplaced503 = tenants.flatMap((t) => (down(t) ? [] : t.ledger.serverErrors.filter((e) => e.status === 503)));
  const perTenant = tenants
    .map((t) => {
      const where = citus
        ? ` (node ${placedBefore!.get(t.id)}${placedAfter!.get(t.id) !== placedBefore!.get(t.id) ? ` then ${placedAfter!.get(t.id)}` : ''}${down(t) ? ', stopped' : ''})`
        : '';
      const byStatus = new Map<number, number>();
      for (const e of t.ledger.serverErrors) byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
      return `${t.name}${where}: ${[...byStatus].map(([s, n]) => `${s} x${n}`).join(', ') || 'none'} of ${t.ledger.totalRequests}`;
    })
    .join('; ');
  const afterStart = o ? tenants.flatMap((t) => t.ledger.serverErrors).filter((e) => e.at > o.startedAt) : [];

  const info: Array<[string, string | number]> = [
    ['seed', SEED],
    [
      'load',
      `${loadSeconds.toFixed(0)} s, ${CLIENTS} clients of ${TENANTS} tenant(s), 2 API processes + 1 worker, ${citus ? `Citus (workers ${[...new Set(placedBefore!.values())].join(', ')} held the tenants at the start)` : 'PostgreSQL'}`,
    ],
    ['requests', `${sum((l) => l.totalRequests)} (${[...counted((l) => l.requests)].map(([op, n]) => `${op} ${n}`).join(', ')})`],
    ['answers', `${statuses}; refused by a dead process and sent to the other: ${sum((l) => l.refused)}`],
    ...(citus
      ? ([
          [
            'rebalance',
            rb ? `node ${rb.node} added, job ${rb.job} ${rb.state}: ${rb.moved} of ${rb.tasks} shard moves done in ${rb.seconds.toFixed(1)} s` : 'none',
          ],
          [
            'worker stopped',
            o
              ? `node ${o.node} for ${((o.startedAt - o.stoppedAt) / 1000).toFixed(1)} s, holding ${o.tenants.size} of ${TENANTS} tenants; 5xx after it was started again: ${afterStart.length}`
              : 'none',
          ],
          ['5xx by tenant', perTenant],
        ] as Array<[string, string]>)
      : []),
    ['kills (SIGKILL)', `${kills.length}: worker ${worker.kills}, api-a ${apiA.kills}, api-b ${apiB.kills}`],
    ['jobs processing at worker kills', interrupted],
    ['dead-worker releases logged', worker.logLines('released the jobs of workers').length],
    ['queue drained in', `${drainSeconds.toFixed(1)} s`],
    [
      'acknowledged writes checked',
      `${acked} (creates ${f.checked.creates}, bulk items ${f.checked.bulkItems}, deletes ${f.checked.deletes}, remembers ${f.checked.remembers}, import items ${f.checked.importItems}) + ${f.checked.facts} facts`,
    ],
    [
      'imports',
      `${imports.length}, acknowledged ${imports.filter((i) => i.acked).length}; sent again with their key after no answer or a 409: ${retried.length} (acknowledged then ${retried.filter((i) => i.acked).length})`,
    ],
    ['sync drops', `${sum((l) => l.drops.sent)}, cut short by a kill ${sum((l) => l.drops.unanswered)}; batch files checked ${f.checked.files}`],
    ['unacknowledged writes that landed', f.landedWithoutAck],
    ['jobs', `done ${f.jobs.done}, failed ${f.jobs.failed}${f.jobs.skipped ? `, skipped ${f.jobs.skipped}` : ''}`],
    ['graphile queue rows left', queueLeft],
    [
      'cache probes',
      `${allProbes.length} (fresh ${probes.fresh}, stale ${probes.stale}, inconclusive ${probes.inconclusive}; cache warm before the write in ${probes.warm})`,
    ],
  ];
  const invariants: Array<[string, number | string, boolean]> = [
    ['losses', f.losses.length, f.losses.length === 0],
    ['duplicates', f.duplicates.length, f.duplicates.length === 0],
    ['jobs not terminal', f.notTerminal.length, f.notTerminal.length === 0],
    ['partial bulk writes', f.partialBulks.length, f.partialBulks.length === 0],
    ['stored files unaccounted for', f.unaccountedFiles.length, f.unaccountedFiles.length === 0],
    ['other broken promises', f.broken.length, f.broken.length === 0],
    ['5xx answers other than 503', not503.length, not503.length === 0],
    ['503 answers to tenants not on the stopped node', misplaced503.length, misplaced503.length === 0],
    ['stale cross-process reads', probes.stale, probes.stale === 0],
    ['quiet probes not fresh', quietInconclusive, quietInconclusive === 0],
    ['shared rate limit', rate.detail, rate.ok],
    ['revocation across processes', revocation.detail, revocation.ok],
  ];
  const width = Math.max(...[...info, ...invariants].map(([k]) => k.length));
  console.log('\nfault-and-load run');
  for (const [k, v] of info) console.log(`  ${k.padEnd(width)}  ${v}`);
  console.log('invariants');
  for (const [k, v, ok] of invariants) console.log(`  ${k.padEnd(width)}  ${ok ? 'ok  ' : 'FAIL'}  ${v}`);
  console.log(`kills: ${kills.join(', ')}`);
  const details = [
    ...f.losses,
    ...f.duplicates,
    ...f.partialBulks,
    ...f.unaccountedFiles,
    ...f.broken,
    ...[...not503, ...misplaced503].map((e) => e.line),
    ...allProbes.flatMap((p) => (p.detail ? [p.detail] : [])),
  ];
  for (const j of f.notTerminal) details.push(`job ${j.id}: ${j.state}, attempts ${j.attempts}, updated ${j.updated_at.toISOString()}, error ${j.error}`);
  for (const line of details.slice(0, 40)) console.log(`  ! ${line}`);
  if (details.length > 40) console.log(`  ! ... and ${details.length - 40} more`);
  exitCode = invariants.every(([, , ok]) => ok) ? 0 : 1;
  console.log(`database kept: ${args.db}${exitCode ? `; process logs: ${dir}` : ''}`);
} finally {
  if (args['citus-stop-seconds']) for (const port of (await citusWorkers(databaseUrl)) ?? []) startWorker(Number(new URL(port).port));
  await Promise.all([apiA.stop(), apiB.stop(), worker.stop()]);
  await sql.end();
  await fake.close();
  if (!exitCode) rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);

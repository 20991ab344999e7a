/**
 * What the per-key rate limiter adds to a request: the same cheap authenticated read
 * (GET /v1/memory/collections) under 8 concurrent clients, against `orgmem serve` with the
 * limiter on and off (ORGMEM_RATE_LIMIT), in alternating rounds on the same database.
 *
 *   node --import tsx bench/ratelimit/run.ts [--db postgres|pglite|both] [--requests 8000] [--rounds 3]
 *
 * PostgreSQL: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) is used
 * to create and drop a database of the run's own. The limit is set out of reach so every
 * request takes the full path (no 429 short cut).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import postgres from 'postgres';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLIENTS = 8;
const { values: args } = parseArgs({
  options: { db: { type: 'string', default: 'both' }, requests: { type: 'string', default: '8000' }, rounds: { type: 'string', default: '3' } },
});
const REQUESTS = Number(args.requests);
const ROUNDS = Number(args.rounds);
const TIERS = JSON.stringify({
  enterprise: { rate_limit_per_minute: 1_000_000_000, max_memories: null, max_collections: null, max_storage_bytes: null },
});

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round2 = (x: number) => Math.round(x * 100) / 100;

function cli(env: Record<string, string>, ...argv: string[]): string {
  return execFileSync(process.execPath, ['bin/orgmem.js', ...argv], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
}

async function serve(env: Record<string, string>, port: number) {
  const child = spawn(process.execPath, ['bin/orgmem.js', 'serve', '--no-worker', '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, ORGMEM_LOG_LEVEL: 'warn', ORGMEM_TIERS: TIERS, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i > 400) throw new Error('orgmem did not start');
    if (await fetch(`${url}/v1/memory/health`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}

/** `CLIENTS` loops, each sending its share of requests one after the other; latencies in ms. */
async function load(url: string, keys: string[], requests: number): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const headers = { authorization: `Bearer ${keys[c % keys.length]}` };
      for (let i = 0; i < requests / CLIENTS; i++) {
        const t0 = performance.now();
        const res = await fetch(`${url}/v1/memory/collections`, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

async function bench(db: 'postgres' | 'pglite') {
  const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `orgmem_bench_rl_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-bench-rl-'));
  let env: Record<string, string> = { ORGMEM_EMBEDDER: 'hash', ORGMEM_DATA_DIR: dir };
  if (db === 'postgres') {
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(base);
    url.pathname = `/${name}`;
    env = { ...env, DATABASE_URL: url.toString() };
  }
  try {
    const out = cli(env, 'admin', 'create-tenant', '--name', 'bench', '--email', 'bench@bench.local', '--tier', 'enterprise');
    const owner = /(mv_[A-Za-z0-9_-]{43})/.exec(out)![1]!;
    const results: Record<string, Record<string, { latencies: number[]; seconds: number }[]>> = {};
    let perClient: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const limiter of ['on', 'off'] as const) {
        const server = await serve({ ...env, ORGMEM_RATE_LIMIT: limiter === 'on' ? '1' : '0' }, 18_000 + r * 2 + (limiter === 'on' ? 0 : 1));
        try {
          if (!perClient.length) {
            for (let c = 0; c < CLIENTS; c++) {
              const res = await fetch(`${server.url}/v1/memory/keys`, {
                method: 'POST',
                headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
                body: JSON.stringify({ label: `client-${c}` }),
              });
              perClient.push(((await res.json()) as { api_key: string }).api_key);
            }
          }
          await load(server.url, [owner], 400); // warm-up: JIT, pool, prepared statements
          for (const [keys, label] of [[[owner], 'one shared key'], [perClient, 'a key per client']] as const) {
            ((results[label] ??= {})[limiter] ??= []).push(await load(server.url, [...keys], REQUESTS));
          }
        } finally {
          await server.stop();
        }
      }
    }
    for (const [label, byMode] of Object.entries(results)) {
      const row = (mode: string) => {
        const runs = byMode[mode]!;
        const sorted = runs.flatMap((x) => x.latencies).sort((a, b) => a - b);
        const rps = runs.reduce((s, x) => s + x.latencies.length, 0) / runs.reduce((s, x) => s + x.seconds, 0);
        return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), rps };
      };
      const on = row('on');
      const off = row('off');
      console.log(
        `${db.padEnd(8)} ${label.padEnd(17)} limiter on: p50 ${round2(on.p50)} ms, p95 ${round2(on.p95)} ms, ${Math.round(on.rps)} req/s | ` +
          `off: p50 ${round2(off.p50)} ms, p95 ${round2(off.p95)} ms, ${Math.round(off.rps)} req/s | ` +
          `added: p50 ${round2(on.p50 - off.p50)} ms, p95 ${round2(on.p95 - off.p95)} ms`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (db === 'postgres') {
      const admin = postgres(base, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }
}

console.log(`${CLIENTS} concurrent clients, ${REQUESTS} requests per measurement, ${ROUNDS} alternating rounds per mode`);
for (const db of args.db === 'both' ? (['postgres', 'pglite'] as const) : [args.db as 'postgres' | 'pglite']) await bench(db);

/**
 * What the per-key rate limiter adds to a request: the same cheap authenticated read
 * (GET /v1/memory/collections) from 8 concurrent clients against `orgmem serve` with the
 * limiter on and off (ORGMEM_RATE_LIMIT), on the same database, with one key shared by all
 * clients (one hot counter row) and with a key per client.
 *
 *   node --import tsx bench/ratelimit/run.ts [--db postgres|pglite] [--requests 16000] [--blocks 16]
 *
 * PostgreSQL (default): two servers run side by side and blocks of requests alternate between
 * them, so both modes see the same background load. BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres) is used to create and drop a database of the
 * run's own. PGlite cannot be shared by two processes: there each block restarts the server in
 * the other mode. The limit is set out of reach, so every request takes the full path.
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
  options: { db: { type: 'string', default: 'postgres' }, requests: { type: 'string', default: '16000' }, blocks: { type: 'string', default: '16' } },
});
const DB = args.db as 'postgres' | 'pglite';
const BLOCKS = Number(args.blocks);
const PER_BLOCK = Math.ceil(Number(args.requests) / BLOCKS / CLIENTS) * CLIENTS;
const TIERS = JSON.stringify({
  enterprise: { rate_limit_per_minute: 1_000_000_000, max_memories: null, max_collections: null, max_storage_bytes: null },
});
type Mode = 'on' | 'off';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function serve(env: Record<string, string>, mode: Mode, port: number) {
  const child = spawn(process.execPath, ['bin/orgmem.js', 'serve', '--no-worker', '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, ORGMEM_LOG_LEVEL: 'warn', ORGMEM_TIERS: TIERS, ...env, ORGMEM_RATE_LIMIT: mode === 'on' ? '1' : '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i > 400) throw new Error('orgmem did not start');
    if (
      await fetch(`${url}/v1/memory/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}

/** CLIENTS loops, each sending its share one request after the other; latencies in ms. */
async function load(url: string, keys: string[], requests: number): Promise<number[]> {
  const latencies: number[] = [];
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
  return latencies;
}

async function createKeys(url: string, owner: string): Promise<string[]> {
  const keys: string[] = [];
  for (let c = 0; c < CLIENTS; c++) {
    const res = await fetch(`${url}/v1/memory/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: `client-${c}` }),
    });
    keys.push(((await res.json()) as { api_key: string }).api_key);
  }
  return keys;
}

const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `orgmem_bench_rl_${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'orgmem-bench-rl-'));
let env: Record<string, string> = { ORGMEM_EMBEDDER: 'hash', ORGMEM_DATA_DIR: dir };
const admin = DB === 'postgres' ? postgres(base, { max: 1, onnotice: () => {} }) : undefined;
if (admin) {
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  env = { ...env, DATABASE_URL: url.toString() };
}
try {
  const out = execFileSync(
    process.execPath,
    ['bin/orgmem.js', 'admin', 'create-tenant', '--name', 'bench', '--email', 'bench@bench.local', '--tier', 'enterprise'],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    },
  );
  const owner = /(mv_[A-Za-z0-9_-]{43})/.exec(out)![1]!;
  // PostgreSQL: both servers for the whole run. PGlite: one at a time, restarted per block.
  const both = DB === 'postgres' ? { on: await serve(env, 'on', 18_101), off: await serve(env, 'off', 18_102) } : undefined;
  const withServer = async <T>(mode: Mode, fn: (url: string) => Promise<T>): Promise<T> => {
    if (both) return fn(both[mode].url);
    const server = await serve(env, mode, 18_103);
    try {
      await load(server.url, [owner], 400); // warm-up after each start
      return await fn(server.url);
    } finally {
      await server.stop();
    }
  };
  try {
    const perClient = await withServer('on', (url) => createKeys(url, owner));
    if (both) for (const mode of ['on', 'off'] as const) await load(both[mode].url, [owner], 800); // warm-up: JIT, pools, statements
    const samples: Record<string, Record<Mode, number[]>> = {};
    for (let b = 0; b < BLOCKS; b++) {
      for (const mode of (b % 2 ? ['on', 'off'] : ['off', 'on']) as Mode[]) {
        await withServer(mode, async (url) => {
          for (const [label, keys] of [
            ['one shared key', [owner]],
            ['a key per client', perClient],
          ] as const) {
            (samples[label] ??= { on: [], off: [] })[mode].push(...(await load(url, [...keys], PER_BLOCK)));
          }
        });
      }
    }
    console.log(`${DB}: ${CLIENTS} concurrent clients, ${BLOCKS} alternating blocks of ${PER_BLOCK} requests per mode and key setup`);
    for (const [label, byMode] of Object.entries(samples)) {
      const stats = (xs: number[]) => {
        const sorted = [...xs].sort((a, b) => a - b);
        return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), n: xs.length };
      };
      const on = stats(byMode.on);
      const off = stats(byMode.off);
      console.log(
        `  ${label.padEnd(17)} limiter off: p50 ${ms(off.p50)}, p95 ${ms(off.p95)} | on: p50 ${ms(on.p50)}, p95 ${ms(on.p95)} | ` +
          `added: p50 ${ms(on.p50 - off.p50)}, p95 ${ms(on.p95 - off.p95)} (n = ${on.n} each)`,
      );
    }
  } finally {
    if (both) await Promise.all([both.on.stop(), both.off.stop()]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (admin) {
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

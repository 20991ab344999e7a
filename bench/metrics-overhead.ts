/**
 * What the operator metrics' hook (src/ports/metrics.ts, called from invoke) adds to a request:
 * the same cheap read, GET /v1/memory/health (a procedure like any other: the whole pipeline,
 * no database), against two `orgmem serve` processes side by side, one with ORGMEM_METRICS=1 and
 * one with ORGMEM_METRICS=0, at concurrency 1 and 8. Blocks of requests alternate between the
 * two, so both see the same background load. Then the hook alone, in this process: the cost of
 * one `request()` call (JSON window and Prometheus histogram).
 *
 *   npm run build:js && node --import tsx bench/metrics-overhead.ts [--requests 20000] [--blocks 20]
 *
 * Each server (the built `bin/orgmem.js serve`) opens an in-memory embedded database of its own.
 */
import { parseArgs } from 'node:util';
import { createMetrics } from '../src/ports/metrics.ts';
import { startOrgmem } from './lib/server.ts';
import { percentile, round } from './lib/stats.ts';

const { values: args } = parseArgs({ options: { requests: { type: 'string', default: '20000' }, blocks: { type: 'string', default: '20' } } });
const BLOCKS = Number(args.blocks);
type Mode = 'on' | 'off';

/** A server of its own per mode: an in-memory embedded database, the hash embedder, metrics on or off. */
const serve = (mode: Mode, port: number) =>
  startOrgmem({ ORGMEM_DATA_DIR: 'memory://', ORGMEM_EMBEDDER: 'hash', ORGMEM_METRICS: mode === 'on' ? '1' : '0' }, port);

/** `clients` loops sending `requests` in all, one after the other each; latencies in ms and the block's wall time. */
async function load(url: string, clients: number, requests: number) {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = 0; i < requests / clients; i++) {
        const t0 = performance.now();
        const res = await fetch(`${url}/v1/memory/health`);
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, wall: performance.now() - started };
}

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

async function compare(servers: Record<Mode, string>, clients: number) {
  const perBlock = Math.ceil(Number(args.requests) / BLOCKS / clients) * clients;
  const samples: Record<Mode, number[]> = { on: [], off: [] };
  const wall: Record<Mode, number> = { on: 0, off: 0 };
  for (const mode of ['on', 'off'] as const) await load(servers[mode], clients, Math.min(2000, perBlock)); // warm-up
  for (let b = 0; b < BLOCKS; b++) {
    for (const mode of b % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const r = await load(servers[mode], clients, perBlock);
      samples[mode].push(...r.latencies);
      wall[mode] += r.wall;
    }
  }
  const n = perBlock * BLOCKS;
  const row = (mode: Mode) => {
    const s = samples[mode];
    const mean = s.reduce((a, x) => a + x, 0) / s.length;
    return { mean, p50: percentile(s, 50), p95: percentile(s, 95), perRequest: wall[mode] / n };
  };
  const on = row('on');
  const off = row('off');
  console.log(`\nconcurrency ${clients}, ${n} requests per mode in ${BLOCKS} alternating blocks`);
  for (const [mode, r] of [
    ['metrics on ', on],
    ['metrics off', off],
  ] as const) {
    console.log(`  ${mode}: mean ${us(r.mean)}, p50 ${us(r.p50)}, p95 ${us(r.p95)}, wall per request ${us(r.perRequest)}`);
  }
  console.log(
    `  difference (on - off): mean latency ${us(on.mean - off.mean)}, p50 ${us(on.p50 - off.p50)}, wall per request ${us(on.perRequest - off.perRequest)}`,
  );
}

/** The hook alone: `request()` as invoke calls it, over a spread of routes and statuses. */
function hookAlone() {
  const m = createMetrics(true);
  const routes = Array.from({ length: 50 }, (_, i) => ({ method: i % 2 ? 'GET' : 'POST', path: `/v1/memory/collections/{collection}/route-${i}` }));
  const N = 1_000_000;
  for (let i = 0; i < 100_000; i++) m.request(routes[i % 50]!, i % 7 ? 200 : 404, (i % 100) / 10); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < N; i++) m.request(routes[i % 50]!, i % 7 ? 200 : 404, (i % 100) / 10);
  const perCall = (performance.now() - t0) / N;
  const s0 = performance.now();
  for (let i = 0; i < N; i++) m.stage('cache_get', (i % 100) / 100);
  const perStage = (performance.now() - s0) / N;
  console.log(`\nthe hook alone (this process): request() ${round(perCall * 1e6, 0)} ns per call, stage() ${round(perStage * 1e6, 0)} ns per call`);
}

hookAlone();
const on = await serve('on', 18_711);
const off = await serve('off', 18_712);
try {
  for (const clients of [1, 8]) await compare({ on: on.url, off: off.url }, clients);
} finally {
  await Promise.all([on.stop(), off.stop()]);
}

import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { Embedder } from './embedder/embedder.ts';

/** The timed stages of the operator's metrics: every embedder call, result-cache get, retrieval, extraction call. */
export const STAGES = ['embed', 'cache_get', 'search', 'llm_extract'] as const;
export type Stage = (typeof STAGES)[number];
export type MetricsCounter = 'search_cache_hit' | 'search_cache_miss';

/** Why a file-reading worker was ended (src/services/files/parse-runner.ts): its heap cap, its deadline, or it died. */
export type RunnerKill = 'memory' | 'time' | 'crash';

/*
 * The bounded file reader's workers are the process's, shared by every App in it, as Node's own
 * figures are: their kills are counted once per process, and each App's window reads how many
 * happened since it started.
 */
let runnerKills = 0;
const runnerRegistry = new Registry();
const runnerKillsCounter = new Counter({
  name: 'orgmem_parse_runner_kills_total',
  help: 'File-reading workers ended by their memory cap or deadline, or that died (ORGMEM_PARSE_MAX_MEMORY_MB, ORGMEM_PARSE_TIMEOUT_SECONDS)',
  labelNames: ['reason'] as const,
  registers: [runnerRegistry],
});

/** Counts a file-reading worker ended for `reason` (every App's metrics see it). */
export function countRunnerKill(reason: RunnerKill): void {
  runnerKills++;
  runnerKillsCounter.inc({ reason });
}

export interface Timing {
  count: number;
  avg_ms: number;
  p50_ms: number;
  p95_ms: number;
}

/** The operator's metrics: the window since the process started or the last reset. */
export interface MetricsWindow {
  window_started_at: string;
  routes: Array<{ route: string; count: number; status_4xx: number; status_5xx: number } & Omit<Timing, 'count'>>;
  stages: Record<Stage, Timing>;
  /** The App's counters, and the process's runner kills (`countRunnerKill`) in the window. */
  counters: Record<MetricsCounter | 'parse_runner_killed', number>;
}

/**
 * The process's request and stage timings (one per App: tests run several in one process).
 * Recording is synchronous and allocation-light; off (ORGMEM_METRICS=0), every call is a no-op
 * and both readings are empty.
 */
export interface Metrics {
  readonly enabled: boolean;
  /** One call of a procedure, whatever the front end: `METHOD path-template`, never a filled path. */
  request(route: { method: string; path: string }, status: number, ms: number): void;
  stage(stage: Stage, ms: number): void;
  count(counter: MetricsCounter): void;
  /** Runs `fn` timed as `stage`, a failure included. */
  time<T>(stage: Stage, fn: () => Promise<T>): Promise<T>;
  /** The current window; `reset` starts a new one in the same synchronous step, so no sample is lost or counted twice. */
  read(reset: boolean): MetricsWindow;
  /** Cumulative since start (Prometheus' own convention: a reset of the window does not touch it), with the process metrics. */
  prometheus(): Promise<string>;
}

/**
 * Percentiles come from a fixed log-scale histogram per key: 8 buckets per doubling from 1 µs to
 * 2^30 µs (about 18 minutes; longer lands in the last), 241 counters. Memory is fixed per key
 * whatever the traffic, a sample costs one log2 and an increment, reading needs no sort, and the
 * answer is deterministic (a reservoir would sample at random). A percentile is its bucket's
 * geometric middle, within 4.5% of the true value, clamped to the observed min and max (so a
 * single sample reads back exactly). Keys are bounded too: one per procedure, one per stage.
 */
const PER_DOUBLING = 8;
const BUCKETS = 30 * PER_DOUBLING + 1;

class Timings {
  count = 0;
  sum = 0;
  min = Infinity;
  max = 0;
  readonly buckets = new Float64Array(BUCKETS);

  add(ms: number) {
    this.count++;
    this.sum += ms;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
    const us = ms * 1000;
    this.buckets[us <= 1 ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log2(us) * PER_DOUBLING))]!++;
  }

  /** Bucket i holds (2^((i-1)/8), 2^(i/8)] µs. */
  quantile(q: number): number {
    if (!this.count) return 0;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    let i = 0;
    while ((seen += this.buckets[i]!) < rank) i++;
    const middle = 2 ** ((i - 0.5) / PER_DOUBLING) / 1000;
    return Math.min(this.max, Math.max(this.min, middle));
  }

  read(): Timing {
    const r = (ms: number) => Math.round(ms * 1000) / 1000;
    return { count: this.count, avg_ms: r(this.count ? this.sum / this.count : 0), p50_ms: r(this.quantile(0.5)), p95_ms: r(this.quantile(0.95)) };
  }
}

class RouteTimings extends Timings {
  status_4xx = 0;
  status_5xx = 0;
}

interface Window {
  startedAt: Date;
  routes: Map<string, RouteTimings>;
  stages: Record<Stage, Timings>;
  counters: Record<MetricsCounter, number>;
  /** The process's runner kills when the window started. */
  runnerKillsBefore: number;
}

const newWindow = (): Window => ({
  startedAt: new Date(),
  routes: new Map(),
  stages: { embed: new Timings(), cache_get: new Timings(), search: new Timings(), llm_extract: new Timings() },
  counters: { search_cache_hit: 0, search_cache_miss: 0 },
  runnerKillsBefore: runnerKills,
});

const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

/**
 * Node's process metrics (CPU, memory, event loop, GC, handles) for every App of the process: one
 * registry, not the global one, made once. They describe the process, not an App, and
 * collectDefaultMetrics cannot be undone (it starts an event-loop monitor and a GC observer), so
 * one set per App would pile up with every App a test process opens.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  // Made with the first App that records, so the event-loop and GC figures cover its life.
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics(enabled: boolean): Metrics {
  if (!enabled) return disabledMetrics();
  const nodeMetrics = processMetrics();
  let current = newWindow();
  const registry = new Registry();
  const requests = new Histogram({
    name: 'orgmem_request_duration_seconds',
    help: 'Procedure calls through the pipeline (REST, tRPC, MCP), by method, path template and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const stages = new Histogram({
    name: 'orgmem_stage_duration_seconds',
    help: 'Stages: embed (every embedder call), cache_get (search result cache), search (retrieval), llm_extract (extract_facts calls)',
    labelNames: ['stage'] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const counters: Record<MetricsCounter, Counter> = {
    search_cache_hit: new Counter({ name: 'orgmem_search_cache_hits_total', help: 'Search answers served from the result cache', registers: [registry] }),
    search_cache_miss: new Counter({ name: 'orgmem_search_cache_misses_total', help: 'Searches the result cache did not hold', registers: [registry] }),
  };
  // prom-client hashes a label set on every observation; the label objects at least are made once.
  const labelSets = new Map<string, { method: string; route: string; status_class: string }>();
  const stageLabels = Object.fromEntries(STAGES.map((s) => [s, { stage: s }])) as Record<Stage, { stage: Stage }>;

  const metrics: Metrics = {
    enabled: true,
    request({ method, path }, status, ms) {
      const route = `${method} ${path}`;
      let t = current.routes.get(route);
      if (!t) current.routes.set(route, (t = new RouteTimings()));
      t.add(ms);
      if (status >= 500) t.status_5xx++;
      else if (status >= 400) t.status_4xx++;
      const cls = statusClass(status);
      const key = `${route} ${cls}`;
      let labels = labelSets.get(key);
      if (!labels) labelSets.set(key, (labels = { method, route: path, status_class: cls }));
      requests.observe(labels, ms / 1000);
    },
    stage(stage, ms) {
      current.stages[stage].add(ms);
      stages.observe(stageLabels[stage], ms / 1000);
    },
    count(counter) {
      current.counters[counter]++;
      counters[counter].inc();
    },
    async time(stage, fn) {
      const started = performance.now();
      try {
        return await fn();
      } finally {
        metrics.stage(stage, performance.now() - started);
      }
    },
    read(reset) {
      const w = current;
      if (reset) current = newWindow();
      return {
        window_started_at: w.startedAt.toISOString(),
        routes: [...w.routes]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([route, t]) => {
            const { count, ...timing } = t.read();
            return { route, count, status_4xx: t.status_4xx, status_5xx: t.status_5xx, ...timing };
          }),
        stages: Object.fromEntries(STAGES.map((s) => [s, w.stages[s].read()])) as Record<Stage, Timing>,
        counters: { ...w.counters, parse_runner_killed: runnerKills - w.runnerKillsBefore },
      };
    },
    prometheus: () => Registry.merge([registry, nodeMetrics, runnerRegistry]).metrics(),
  };
  return metrics;
}

function disabledMetrics(): Metrics {
  const startedAt = new Date().toISOString();
  const none = newWindow();
  return {
    enabled: false,
    request() {},
    stage() {},
    count() {},
    time: (_stage, fn) => fn(),
    read: () => ({
      window_started_at: startedAt,
      routes: [],
      stages: Object.fromEntries(STAGES.map((s) => [s, none.stages[s].read()])) as Record<Stage, Timing>,
      counters: { ...none.counters, parse_runner_killed: 0 },
    }),
    prometheus: async () => '',
  };
}

/**
 * The embedder with every call timed as `embed`: the one place all embedding goes through (the
 * App's embedder), but for a file's chunks hashed by the files service's runner (`hashed`).
 */
export function timedEmbedder(embedder: Embedder, metrics: Metrics): Embedder {
  if (!metrics.enabled) return embedder;
  return {
    name: embedder.name,
    dimensions: embedder.dimensions,
    ...(embedder.hashed && { hashed: embedder.hashed }),
    embed: (texts) => metrics.time('embed', () => embedder.embed(texts)),
  };
}

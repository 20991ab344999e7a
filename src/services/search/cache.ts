import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { App } from '../../core/context.ts';
import type { SearchResult } from '../../schemas/search.ts';
import type { Filters, Scope } from './scope.ts';

export interface CachedAnswer {
  results: SearchResult[];
}

interface Caches {
  answers: LRUCache<string, CachedAnswer>;
  embeddings: LRUCache<string, Float32Array>;
  broad: LRUCache<string, true>;
}

// Caches belong to one running App (tests start several in one process); a WeakMap keeps them
// off the App type and lets them go with it.
const perApp = new WeakMap<App, Caches>();

function caches(app: App): Caches {
  let c = perApp.get(app);
  if (!c) {
    const { resultCacheBytes, embeddingCacheEntries } = app.config.search;
    c = {
      answers: new LRUCache<string, CachedAnswer>({
        maxSize: Math.max(1, resultCacheBytes),
        // Serialised length is close to what the entry holds in memory.
        sizeCalculation: (v) => Math.max(1, JSON.stringify(v).length),
      }),
      embeddings: new LRUCache<string, Float32Array>({ max: Math.max(1, embeddingCacheEntries) }),
      broad: new LRUCache<string, true>({ max: BROAD_ENTRIES, ttl: BROAD_TTL_MS }),
    };
    perApp.set(app, c);
  }
  return c;
}

/**
 * The exact-repeat key: everything that decides the answer. `scope` lists the collections read
 * with their versions (bumped by every write, in the database, so every API process sees the
 * same ones); a write, or a grant change that alters which collections the caller may read,
 * changes the key, and the stale entry simply ages out of the LRU.
 */
export function answerKey(parts: { tenantId: string; kind: string; scope: Array<[string, string]>; request: unknown }): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

/** A lookup of the result cache (search and related), timed as `cache_get` and counted as a hit or a miss (none while it is off). */
export function getAnswer(app: App, key: string): CachedAnswer | undefined {
  if (app.config.search.resultCacheBytes <= 0) return undefined;
  const started = performance.now();
  const hit = caches(app).answers.get(key);
  app.metrics.stage('cache_get', performance.now() - started);
  app.metrics.count(hit ? 'search_cache_hit' : 'search_cache_miss');
  return hit;
}

/** `ttlMs`: when the earliest memory among the candidates expires, after which the answer would change. */
export function putAnswer(app: App, key: string, answer: CachedAnswer, ttlMs?: number): void {
  if (app.config.search.resultCacheBytes <= 0) return;
  caches(app).answers.set(key, answer, ttlMs !== undefined ? { ttl: Math.max(1, ttlMs) } : undefined);
}

/** The query's embedding, from the cache or the embedder; `ms` is 0 on a cache hit. */
export async function embedQuery(app: App, text: string): Promise<{ vector: ArrayLike<number>; ms: number }> {
  const cache = app.config.search.embeddingCacheEntries > 0 ? caches(app).embeddings : undefined;
  const hit = cache?.get(text);
  if (hit) return { vector: hit, ms: 0 };
  const started = performance.now();
  const [vector] = await app.embedder.embed([text]);
  const ms = performance.now() - started;
  const stored = Float32Array.from(vector!);
  cache?.set(text, stored);
  return { vector: stored, ms };
}

/**
 * Filters found to select more memories than the exact bound, so that the next search with them
 * goes straight to the indexes instead of reading the bound's worth of rows again first. Only a
 * cost decision, never the answer's: an entry that went stale (the filter's memories were
 * deleted) costs an approximate search that falls back to exact if short, and it expires.
 */
const BROAD_ENTRIES = 10_000;
const BROAD_TTL_MS = 10 * 60_000;
const broadKey = (scope: Scope, f: Filters) =>
  JSON.stringify([scope.tenantId, scope.collections, f.category, f.container_tag, f.metadata_filter, f.include_archived, f.trust]);

export const isBroad = (app: App, scope: Scope, filters: Filters) => caches(app).broad.has(broadKey(scope, filters));
export const markBroad = (app: App, scope: Scope, filters: Filters) => void caches(app).broad.set(broadKey(scope, filters), true);

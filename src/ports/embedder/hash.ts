import { hash } from 'node:crypto';
import type { Embedder } from './embedder.ts';

/**
 * A fast deterministic embedder (feature hashing of words and word pairs). It has no
 * semantics beyond shared words; it exists so benchmarks measure the search engine rather
 * than the model, and so tests can run without loading one.
 */
export function hashEmbedder(dimensions: number): Embedder {
  return {
    name: `hash (${dimensions}-d, deterministic, no semantics)`,
    dimensions,
    async embed(texts) {
      return texts.map((t) => hashVector(t, dimensions));
    },
  };
}

function hashVector(text: string, dims: number): number[] {
  const v = new Float64Array(dims);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const features = [...words, ...words.slice(1).map((w, i) => `${words[i]} ${w}`)];
  for (const f of features) {
    // The one-shot hash: half the CPU of a Hash object per feature, the same digest.
    const h = hash('md5', f, 'buffer');
    const bucket = h.readUInt32LE(0) % dims;
    v[bucket] = v[bucket]! + ((h[4]! & 1) === 1 ? 1 : -1);
  }
  // An all-zero vector has no cosine distance (no words, or features that cancel out): give it a
  // fixed direction instead.
  if (v.every((x) => x === 0)) v[0] = 1;
  const norm = Math.hypot(...v) || 1;
  return Array.from(v, (x) => x / norm);
}

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
    hashed: { dimensions },
    async embed(texts) {
      return texts.map((t) => hashVector(t, dimensions));
    },
  };
}

function hashVector(text: string, dims: number): number[] {
  const v = new Float64Array(dims);
  const add = (feature: string) => {
    // The one-shot hash: half the CPU of a Hash object per feature, the same digest.
    const h = hash('md5', feature, 'buffer');
    const bucket = h.readUInt32LE(0) % dims;
    v[bucket] = v[bucket]! + ((h[4]! & 1) === 1 ? 1 : -1);
  };
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const w of words) add(w);
  for (let i = 1; i < words.length; i++) add(`${words[i - 1]} ${words[i]}`);
  // Plain loops: Math.hypot over 512 spread arguments, every() and Array.from's callback were half
  // of a bulk load's embedding time (bench/README.md, "The hash embedder's share of the server").
  let squares = 0;
  for (const x of v) squares += x * x;
  // An all-zero vector has no cosine distance (no words, or features that cancel out): give it a
  // fixed direction instead.
  if (squares === 0) {
    v[0] = 1;
    squares = 1;
  }
  const norm = Math.sqrt(squares);
  const out = new Array<number>(dims);
  for (let i = 0; i < dims; i++) out[i] = v[i]! / norm;
  return out;
}

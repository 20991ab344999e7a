import OpenAI from 'openai';
import { inBatches, type Embedder } from './embedder.ts';

/** Any OpenAI-compatible `/embeddings` endpoint, asked for exactly the database's dimension. */
export function openAiEmbedder(opts: { baseUrl: string; model: string; apiKey: string; dimensions: number }): Embedder {
  const client = new OpenAI({ baseURL: opts.baseUrl, apiKey: opts.apiKey || 'unused', maxRetries: 2, timeout: 30_000 });
  return {
    name: `${opts.model} at ${opts.baseUrl} (${opts.dimensions}-d)`,
    dimensions: opts.dimensions,
    embed: (texts) =>
      inBatches(texts, 256, async (batch) => {
        // openai 6 defaults to base64 and yields empty vectors when a server answers floats anyway.
        const res = await client.embeddings.create({
          model: opts.model,
          input: batch,
          dimensions: opts.dimensions,
          encoding_format: 'float',
        });
        const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
        for (const v of vectors) {
          if (v.length !== opts.dimensions) {
            throw new Error(`Embeddings endpoint returned ${v.length} dimensions, expected ${opts.dimensions}`);
          }
        }
        return vectors;
      }),
  };
}

import type { Config } from '../../core/config.ts';
import type { Embedder } from './embedder.ts';
import { hashEmbedder } from './hash.ts';
import { localUseEmbedder } from './local-use.ts';
import { openAiEmbedder } from './openai-compatible.ts';

export function makeEmbedder(cfg: Config['embedder']): Embedder {
  switch (cfg.kind) {
    case 'local':
      return localUseEmbedder({ threads: cfg.threads });
    case 'hash':
      return hashEmbedder(cfg.dimensions);
    case 'openai':
      if (!cfg.baseUrl) throw new Error('ORGMEM_EMBEDDER=openai needs ORGMEM_EMBEDDINGS_BASE_URL');
      return openAiEmbedder({ baseUrl: cfg.baseUrl, model: cfg.model, apiKey: cfg.apiKey, dimensions: cfg.dimensions });
  }
}

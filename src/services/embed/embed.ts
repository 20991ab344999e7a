import type { App } from '../../core/context.ts';

/**
 * The server's embedder lent to another process (the internal embed endpoint): one vector per
 * text, in order, from the same model and dimension as the stored memories.
 */
export async function embedTexts(app: App, texts: string[]) {
  const embeddings = await app.embedder.embed(texts);
  return { model: app.embedder.name, dimensions: app.embedder.dimensions, embeddings };
}

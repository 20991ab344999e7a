import type { AuthedCtx } from '../../core/context.ts';
import { resolveLlm } from '../llm/tenant-llm.ts';
import type { NewMemory } from '../memory/memories.ts';
import { chunkSpans, type Chunk } from './chunk.ts';
import { readText, type FileText, type MediaReader } from './read-text.ts';

/** Characters per chunk: a few paragraphs, small enough for a focused embedding. */
const CHUNK_CHARS = 2000;
/** Chunks embedded per call, so a 10 MB text never becomes one giant embedding request. */
const EMBED_BATCH = 64;

export interface StoredFile {
  key: string;
  filename: string;
  content_type: string;
  data: Buffer;
}

/** Reads images and sound with the tenant's LLM when it has one; without, says why in the per-file error. */
export async function mediaReaderFor(ctx: AuthedCtx): Promise<{ media: MediaReader | null; noMediaReason?: string }> {
  const resolved = await resolveLlm(ctx.app, ctx.tenant.id);
  if (resolved.llm) return { media: resolved.llm };
  return {
    media: null,
    noMediaReason:
      resolved.reason === 'spend_cap'
        ? "Audio and video need the LLM, and this month's spend cap is reached"
        : 'Audio and video need an LLM endpoint with /audio/transcriptions: configure one with PUT /v1/memory/extraction/config',
  };
}

export async function readFile(ctx: AuthedCtx, file: Omit<StoredFile, 'key'>): Promise<FileText> {
  const { media, noMediaReason } = await mediaReaderFor(ctx);
  return readText(file.data, { filename: file.filename, contentType: file.content_type }, ctx.app.config.parse, media, noMediaReason);
}

export async function embedAll(ctx: AuthedCtx, texts: string[]): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += EMBED_BATCH) out.push(...(await ctx.app.embedder.embed(texts.slice(i, i + EMBED_BATCH))));
  return out;
}

/**
 * A file's text as memories: one per chunk, with metadata `{file, chunk, chunks, key}` (chunk
 * counts from 1) so every chunk leads back to its file, plus the pages it is on for a PDF, and the
 * file's own date as observed_at when its metadata gave one (docs/time.md). The same text always
 * gives the same list.
 */
export function fileMemories(file: Omit<StoredFile, 'data'>, read: Pick<FileText, 'text' | 'written' | 'pages'>, source: string): NewMemory[] {
  const { text, written, pages } = read;
  const chunks = chunkSpans(text, CHUNK_CHARS);
  return chunks.map((chunk, i) => ({
    text: chunk.text,
    importance: 0.5,
    category: 'document',
    source,
    metadata: {
      file: file.filename,
      chunk: i + 1,
      chunks: chunks.length,
      ...(pages ? pagesOf(pages, chunk) : {}),
      key: file.key,
      content_type: file.content_type,
    },
    container_tag: null,
    ...(written ? { observed_at: written } : {}),
  }));
}

/**
 * The pages a chunk of a paged text is on, from where each page begins in the text: `{page}`, or
 * `{page, last_page}` when it runs over several (docs/time.md, "Provenance").
 */
export function pagesOf(pages: number[], chunk: Pick<Chunk, 'start' | 'end'>): { page: number; last_page?: number } {
  const on = (at: number) => pages.reduce((page, begins, i) => (begins <= at ? i + 1 : page), 1);
  const [page, last_page] = [on(chunk.start), on(chunk.end - 1)];
  return last_page > page ? { page, last_page } : { page };
}

/** The first characters of a text, for per-file previews. */
export const preview = (text: string) => text.slice(0, 200);

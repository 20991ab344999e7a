import type { AuthedCtx } from '../../core/context.ts';
import { resolveLlm } from '../llm/tenant-llm.ts';
import type { NewMemory } from '../memory/memories.ts';
import { chunkSpans, type Chunk } from './chunk.ts';
import type { Parts } from './formats.ts';
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
 * counts from 1) so every chunk leads back to its file, plus the pages (or slides) it is on, and
 * the file's own date as observed_at when its metadata gave one (docs/time.md). The same text
 * always gives the same list.
 */
export function fileMemories(file: Omit<StoredFile, 'data'>, read: Pick<FileText, 'text' | 'written' | 'parts'>, source: string): NewMemory[] {
  const { text, written, parts } = read;
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
      ...(parts ? partsOf(parts, chunk) : {}),
      key: file.key,
      content_type: file.content_type,
    },
    container_tag: null,
    ...(written ? { observed_at: written } : {}),
  }));
}

/**
 * The parts a chunk is on, from where each begins in the text, as its metadata (and so its
 * provenance, docs/time.md) names them: `{page}`, or `{page, last_page}` when it runs over
 * several; `slide` and `last_slide` for a presentation's; `sheet` and `last_sheet` for a
 * workbook's, by the sheets' names.
 */
export function partsOf(parts: Parts, chunk: Pick<Chunk, 'start' | 'end'>): Record<string, number | string> {
  const on = (at: number) => parts.starts.reduce((part, begins, i) => (begins <= at ? i + 1 : part), 1);
  const [first, last] = [on(chunk.start), on(chunk.end - 1)];
  const name = (n: number) => parts.names?.[n - 1] ?? n;
  return last > first ? { [parts.unit]: name(first), [`last_${parts.unit}`]: name(last) } : { [parts.unit]: name(first) };
}

/** The first characters of a text, for per-file previews. */
export const preview = (text: string) => text.slice(0, 200);

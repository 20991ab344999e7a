import type { AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest, notFound } from '../../core/errors.ts';
import { MAX_FILE_BYTES, type FileUpload } from '../../schemas/files.ts';
import type { Memory, MemoryCreate } from '../../schemas/memory.ts';
import { emitMemoryEvents } from '../events/memory-events.ts';
import { touchCollection } from '../memory/collections.ts';
import { findMemory, insertMemories } from '../memory/memories.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from '../memory/memory-view.ts';
import { fileCleanupJob } from '../storage/file-cleanup.ts';
import { storeFor } from '../storage/tenant-store.ts';
import { isTenantKey } from '../../ports/blobs/blobs.ts';
import { noFileStored, shownFailure, tooLarge, storeUploads, URL_SECONDS, type FileFailure } from './drop.ts';
import { FileLimitError, UnreadableFileError } from './unreadable.ts';
import { chunkSpans, chunkText } from './chunk.ts';
import { embedAll, partsOf, readFile, type StoredFile } from './file-memories.ts';

type Image = MemoryRow['images'][number];

/** Memory texts are at most 10,000 characters: a longer file text keeps its first part, cut at a boundary. */
const MEMORY_CHARS = 10_000;

/** The caption of an image entry: what was read from an image file (its description and text), short. */
const captionOf = (kind: string, text: string) => (kind === 'image' ? text.slice(0, 1000) : null);

function imageEntry(file: StoredFile, index: number, caption: string | null): Image {
  return { index, filename: file.filename, content_type: file.content_type, size: file.data.length, caption, key: file.key };
}

/** Stores every file or none: a file over the limit refuses the whole upload (it makes one memory). */
async function storeAll(ctx: AuthedCtx, collection: string, files: FileUpload[]): Promise<StoredFile[]> {
  const big = files.find((f) => f.data.length > MAX_FILE_BYTES);
  if (big) throw new AppError('PAYLOAD_TOO_LARGE', tooLarge(big.filename));
  return (await storeUploads(ctx, collection, files)).stored;
}

/** Reads a file for its caption and text; a file that cannot be read still attaches, without them. */
async function readForEntry(ctx: AuthedCtx, file: StoredFile) {
  try {
    const { text, kind, written, parts } = await readFile(ctx, file);
    return { text, written, parts, caption: captionOf(kind, text), problem: null, overLimit: false };
  } catch (err) {
    if (!(err instanceof UnreadableFileError)) throw err;
    return { text: '', written: null, caption: null, problem: err.message, overLimit: err instanceof FileLimitError };
  }
}

/**
 * Upload and attach keep every file or none: a file over a reading limit refuses the request
 * with a 422 naming the file and the limit, and the stored files leave the store.
 */
async function refuseOverLimit(ctx: AuthedCtx, stored: StoredFile[], read: Array<Awaited<ReturnType<typeof readForEntry>>>): Promise<void> {
  const i = read.findIndex((r) => r.overLimit);
  if (i < 0) return;
  await (await storeFor(ctx.app, ctx.tenant.id)).delete(stored.map((f) => f.key));
  throw new AppError('UNPROCESSABLE_CONTENT', `${stored[i]!.filename}: ${read[i]!.problem}`);
}

/**
 * One memory with the files attached. Without `text`, its text is what the files hold (their
 * texts joined, cut at 10,000 characters); when no file has any, the upload is refused.
 */
export async function uploadMemory(
  ctx: AuthedCtx,
  collection: string,
  fields: Omit<MemoryCreate, 'text'> & { text?: string },
  files: FileUpload[],
): Promise<Memory> {
  if (!files.length) throw badRequest('Send at least one file (multipart field "files")');
  const stored = await storeAll(ctx, collection, files);
  const read = await Promise.all(stored.map((f) => readForEntry(ctx, f)));
  await refuseOverLimit(ctx, stored, read);
  const text =
    fields.text ??
    chunkText(
      read
        .map((r) => r.text)
        .filter(Boolean)
        .join('\n\n'),
      MEMORY_CHARS,
    )[0];
  if (!text) {
    await (await storeFor(ctx.app, ctx.tenant.id)).delete(stored.map((f) => f.key));
    throw badRequest(
      `No text was given and none could be read from the files (${read
        .flatMap((r, i) => (r.problem ? [`${stored[i]!.filename}: ${r.problem}`] : []))
        .join('; ')})`,
    );
  }
  const images = stored.map((f, i) => imageEntry(f, i, read[i]!.caption));
  const [embedding] = await embedAll(ctx, [text]);
  // The client's observed_at wins; else the first file whose metadata says when it was written (docs/time.md).
  const observed_at = fields.observed_at ?? read.find((r) => r.written)?.written ?? undefined;
  const [memory] = await ctx.app.db.transaction((tx) =>
    insertMemories(tx, ctx, collection, [{ ...fields, text, images, ...(observed_at ? { observed_at } : {}) }], [embedding!], {
      trust: 'document',
    }),
  );
  // A single memory is answered as single-memory GET shows it: with its files' links.
  return withFileUrls(ctx, await findMemory(ctx.app.db, ctx, collection, memory!.id));
}

/**
 * Each file becomes one memory with the file attached; a file that cannot be stored or read fails
 * alone. When none can, the answer is a 422 (noFileStored) and nothing is kept.
 */
export async function uploadFolder(ctx: AuthedCtx, collection: string, files: FileUpload[]) {
  const { stored, failed } = await storeUploads(ctx, collection, files);
  const made: Array<{ file: StoredFile; text: string; caption: string | null; written: string | null; parts: Record<string, number | string> }> = [];
  const problems: FileFailure[] = [...failed];
  for (const file of stored) {
    const r = await readForEntry(ctx, file);
    const first = chunkSpans(r.text, MEMORY_CHARS)[0];
    // A PDF's memory says which pages its text is from (a deck's which slides), as a dropped file's chunks do.
    if (first) made.push({ file, text: first.text, caption: r.caption, written: r.written, parts: r.parts ? partsOf(r.parts, first) : {} });
    else problems.push({ index: file.index, filename: file.filename, detail: r.problem ?? 'No text found' });
  }
  const unread = stored.filter((f) => !made.some((m) => m.file === f)).map((f) => f.key);
  if (unread.length) await (await storeFor(ctx.app, ctx.tenant.id)).delete(unread);
  if (!made.length) throw noFileStored(problems);
  const embeddings = await embedAll(
    ctx,
    made.map((m) => m.text),
  );
  const memories = await ctx.app.db.transaction((tx) =>
    insertMemories(
      tx,
      ctx,
      collection,
      made.map((m) => ({
        text: m.text,
        importance: 0.5,
        category: 'document',
        source: 'upload',
        metadata: { file: m.file.filename, ...m.parts, key: m.file.key, content_type: m.file.content_type },
        container_tag: null,
        images: [imageEntry(m.file, 0, m.caption)],
        ...(m.written ? { observed_at: m.written } : {}),
      })),
      embeddings,
      { trust: 'document' },
    ),
  );
  return {
    created: memories.length,
    memories: memories.map((m, i) => ({ id: m.id, filename: made[i]!.file.filename })),
    failed: problems.map(shownFailure),
  };
}

/** The memory as single-memory GET shows it: each file with a presigned URL (15 minutes). */
export async function withFileUrls(ctx: AuthedCtx, row: MemoryRow): Promise<Memory> {
  const memory = memoryView(row);
  const { file_key } = memory.provenance;
  // The file a memory was read from opens like its images; metadata is the client's, so only a key of this tenant is signed.
  const source = file_key !== undefined && isTenantKey(file_key, ctx.tenant.id) ? file_key : null;
  if (!row.images.length && !source) return memory;
  const store = await storeFor(ctx.app, ctx.tenant.id);
  const origin = ctx.origin ?? `http://localhost:${ctx.app.config.port}`;
  const sign = (key: string) => store.presign('get', key, { expiresInSeconds: URL_SECONDS, origin });
  memory.images = await Promise.all(row.images.map(async ({ key, ...img }) => ({ ...img, url: key ? await sign(key) : null })));
  if (source) memory.provenance.file_url = await sign(source);
  return memory;
}

async function setImages(ctx: AuthedCtx, collection: string, id: string, change: (images: Image[]) => { images: Image[]; removed: string[] }) {
  return ctx.app.db.transaction(async (tx) => {
    const row = await findMemory(tx, ctx, collection, id);
    const { images, removed } = change(row.images);
    const [updated] = await tx.query<MemoryRow>(
      `update memories set images = $3::jsonb, updated_at = now() where tenant_id = $1 and id = $2 returning ${MEMORY_COLUMNS}`,
      [ctx.tenant.id, id, images],
    );
    if (removed.length) await ctx.app.jobs.enqueue(tx, fileCleanupJob, { tenant_id: ctx.tenant.id, keys: removed });
    await touchCollection(tx, ctx.tenant.id, collection, 0);
    await emitMemoryEvents(tx, ctx, 'memory.updated', collection, [memoryView(updated!)]);
    return updated!;
  });
}

/** Attaches files to a memory; indexes keep counting up, so an index never names two files. */
export async function attachFiles(ctx: AuthedCtx, collection: string, id: string, files: FileUpload[]): Promise<Memory> {
  if (!files.length) throw badRequest('Send at least one file (multipart field "files")');
  await findMemory(ctx.app.db, ctx, collection, id);
  const stored = await storeAll(ctx, collection, files);
  const read = await Promise.all(stored.map((f) => readForEntry(ctx, f)));
  await refuseOverLimit(ctx, stored, read);
  const row = await setImages(ctx, collection, id, (images) => {
    const next = images.reduce((n, img) => Math.max(n, img.index + 1), 0);
    return { images: [...images, ...stored.map((f, i) => imageEntry(f, next + i, read[i]!.caption))], removed: [] };
  });
  return withFileUrls(ctx, row);
}

export async function detachFile(ctx: AuthedCtx, collection: string, id: string, index: number): Promise<void> {
  await setImages(ctx, collection, id, (images) => {
    const gone = images.find((img) => img.index === index);
    if (!gone) throw notFound(`Memory ${id} has no file with index ${index}`);
    return { images: images.filter((img) => img !== gone), removed: gone.key ? [gone.key] : [] };
  });
}

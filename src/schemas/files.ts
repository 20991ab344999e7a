import { z } from 'zod';
import { collectionName } from './fields.ts';

/** Files, drop and ingestion as the API shows them (docs/files.md). */

/** 10 MB per file: larger files fail alone, or are flagged at presign. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** The 422 of upload and attach for a file over a reading limit (docs/contract.md, "Limits"). */
export const OVER_READING_LIMIT =
  'A file is over a reading limit (pages, nesting, unzipped size, characters, memory or time: ORGMEM_PARSE_*); the detail names the file and the limit, and nothing is kept';
/** Files per folder upload or drop request; more is a 422. */
export const MAX_FILES = 50;

/**
 * One uploaded file. Over REST it is a multipart part (the adapter reads at most one byte over
 * the limit, so an oversize file is seen as such without buffering the rest); over tRPC and MCP
 * the bytes come as base64 in JSON.
 */
export const fileUpload = z
  .object({
    filename: z.string().min(1).max(255),
    content_type: z.string().max(255).default('application/octet-stream'),
    data: z
      .union([z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected bytes'), z.base64()])
      .transform((d) => (typeof d === 'string' ? Buffer.from(d, 'base64') : Buffer.from(d.buffer, d.byteOffset, d.byteLength)))
      .openapi({ type: 'string', format: 'binary', description: 'The file: a multipart part over REST, base64 over tRPC and MCP' }),
  })
  .openapi('FileUpload');
export type FileUpload = z.output<typeof fileUpload>;
export type FileUploadInput = z.input<typeof fileUpload>;

/** Multipart fields arrive as text: numbers and JSON objects are read from it, other callers send them typed. */
export const formNumber = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v), schema);
export const formJson = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  }, schema);

/** An ingest batch: counts of its files by outcome (docs/contract.md, "Ingest batches and their files"). */
export const ingestBatch = z
  .object({
    batch_id: z.string(),
    collection: collectionName,
    total: z.number().int(),
    done: z.number().int(),
    failed: z.number().int(),
    pending: z.number().int(),
    complete: z.boolean(),
    files: z.array(
      z.object({
        key: z.string(),
        filename: z.string(),
        state: z.enum(['queued', 'processing', 'done', 'failed']),
        chunks: z.number().int(),
        memory_ids: z.array(z.string()),
        error: z.string().nullable(),
      }),
    ),
    created_at: z.string(),
  })
  .openapi('IngestBatch');

export const fileFailure = z.object({ filename: z.string(), detail: z.string() });

/** The files of a folder or drop request: 1 to MAX_FILES. */
export const uploadedFiles = z.array(fileUpload).min(1).max(MAX_FILES).describe(`1 to ${MAX_FILES} files, each at most 10 MB`);

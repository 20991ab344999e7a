import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { queryBool } from '../src/schemas/fields.ts';
import { fileFailure, uploadedFiles } from '../src/schemas/files.ts';
import { dropLater, dropNow } from '../src/services/files/drop.ts';
import { C, inCollection } from './collection-path.ts';

const dropped = z.object({
  filename: z.string(),
  status: z.enum(['stored', 'failed']),
  key: z.string().nullable().describe('Where the file is kept; null when it was not stored (too large)'),
  memory_ids: z.array(z.string()),
  chunks: z.number().int(),
  preview: z.string().describe('The first 200 characters of the text read from the file'),
  detail: z.string().optional().describe('Why the file failed'),
});

/** The 422 of drop and folder upload. */
export const NO_FILE_STORED = 'No file of the request could be stored (each too large or unreadable): errors[] names each file, and nothing is kept';

export default defineProcedure({
  name: 'drop.files',
  summary: 'Drop up to 50 files (multipart): each is stored, read, split into chunks and stored as memories',
  description:
    "Each chunk of a file's text becomes one memory (category document, source drop) with metadata {file, chunk, chunks, key}. " +
    'Read: PDF, DOCX, PPTX, XLSX, ODT, HTML, Markdown, text, CSV, JSON, .eml; images by offline OCR plus the LLM caption; ' +
    'audio and video by the LLM transcription. By default the answer waits and lists each file (201); with async_ingest=true ' +
    'the files are stored and a background worker reads them (202 with a batch to poll at /v1/memory/ingest/batch/{batch_id}). ' +
    'A file that is too large or cannot be read fails alone: while at least one file is stored the answer lists each file. ' +
    'When none can be (each too large or, without async_ingest, unreadable) the answer is 422 with errors[] naming each file ' +
    '(path files.<i>, message "<filename>: <reason>"), and nothing is kept: no file, no memory, no batch. ' +
    'A sync drop records its batch before reading: cut short (its server killed), its unread files are ingested by the worker later.',
  rest: { method: 'POST', path: `${C}/drop`, status: 201 },
  access: 'write',
  // Each file is read and committed on its own; one that cannot be read does not undo the others.
  commits: 'in-steps',
  collection: { field: 'collection', permission: 'write' },
  errors: { UNPROCESSABLE_CONTENT: NO_FILE_STORED },
  input: z.object({
    ...inCollection,
    files: uploadedFiles,
    async_ingest: queryBool.default(false).describe('Queue the files for the background worker and answer at once (query or form field)'),
  }),
  output: z.union([
    z.object({
      batch_id: z.string().describe('The batch recorded before the files were read: every stored file is in it, done, failed or still queued'),
      stored: z.number().int(),
      failed: z.number().int(),
      files: z.array(dropped),
    }),
    z.object({ batch_id: z.string(), queued: z.number().int(), failed: z.array(fileFailure) }),
  ]),
  handler: (ctx, { collection, files, async_ingest }) => (async_ingest ? dropLater(ctx, collection, files) : dropNow(ctx, collection, files)),
});

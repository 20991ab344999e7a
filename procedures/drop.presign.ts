import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { MAX_FILES } from '../src/schemas/files.ts';
import { presignUploads } from '../src/services/files/drop.ts';
import { C, inCollection } from './collection-path.ts';

export default defineProcedure({
  name: 'drop.presign',
  summary: 'Presigned PUT URLs for uploading files straight to the file store; then call drop/complete',
  description:
    'The body is a bare JSON array of {filename, content_type, size}. Each file gets a key ({tenant_id}/{collection}/{uuid}/{filename}) ' +
    'and a URL valid for 15 minutes; PUT the bytes to it with the headers answered. A URL writes once: a second PUT to it is ' +
    'refused (409 on the local store, 412 from S3), so the file drop/complete queued is the file kept. A file over 10 MB gets an error instead of a URL.',
  rest: { method: 'POST', path: `${C}/drop/presign`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  input: z.object({
    ...inCollection,
    uploads: z
      .array(
        z.object({
          filename: z.string().min(1).max(255),
          content_type: z.string().max(255).default('application/octet-stream'),
          size: z.number().int().min(0),
        }),
      )
      .min(1)
      .max(MAX_FILES),
  }),
  output: z.object({
    uploads: z.array(
      z.union([
        z.object({
          filename: z.string(),
          key: z.string(),
          url: z.string(),
          headers: z.record(z.string(), z.string()).describe('Send these with the PUT (If-None-Match: * keeps the upload from replacing a file)'),
          expires_at: z.string(),
        }),
        z.object({ filename: z.string(), error: z.string() }),
      ]),
    ),
  }),
  handler: (ctx, { collection, uploads }) => presignUploads(ctx, collection, uploads),
});

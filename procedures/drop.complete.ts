import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { MAX_FILES } from '../src/schemas/files.ts';
import { completeUploads } from '../src/services/files/drop.ts';
import { C, inCollection } from './collection-path.ts';

export default defineProcedure({
  name: 'drop.complete',
  summary: 'Queue files uploaded with presigned URLs for ingestion as one batch',
  description:
    'The body is a bare JSON array of {key, filename, mime, size} with the keys presign answered for this collection; any other ' +
    'key is a 400, and a key completed before a 409 naming its batch (nothing is queued either way). A file missing from the ' +
    'store or larger than 10 MB is rejected alone; the others are queued (poll /v1/memory/ingest/batch/{batch_id}).',
  rest: { method: 'POST', path: `${C}/drop/complete`, status: 202 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: {
    BAD_REQUEST: "A key is outside this tenant's and collection's upload namespace, or was not issued by presign",
    CONFLICT: 'A key was completed before (the detail names its batch)',
  },
  input: z.object({
    ...inCollection,
    files: z
      .array(
        z.object({
          key: z.string().min(1).max(1024),
          filename: z.string().min(1).max(255),
          mime: z.string().max(255).default(''),
          size: z.number().int().min(0),
        }),
      )
      .min(1)
      .max(MAX_FILES),
  }),
  output: z.object({
    batch_id: z.string(),
    queued: z.number().int(),
    rejected: z.array(z.object({ key: z.string(), filename: z.string(), detail: z.string() })),
  }),
  handler: (ctx, { collection, files }) => completeUploads(ctx, collection, files),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { tenantSchema } from '../src/schemas/access.ts';
import { collectionSchema, memorySchema } from '../src/schemas/memory.ts';
import { EXPORT_FORMATS, exportAccount } from '../src/services/memory/export.ts';

// The export restates nothing: each part is the API's own shape, less what is not exported
// (files, counts, grants, limits).
const exportedMemory = memorySchema.omit({ images: true });
const exportedCollection = collectionSchema.pick({ name: true, description: true, metadata: true, created_at: true });
const exportedTenant = tenantSchema.pick({ id: true, name: true, email: true, tier: true, created_at: true });

export default defineProcedure({
  name: 'admin.export',
  summary: 'Download the account as one JSON file (Content-Disposition: attachment): tenant, collections, memories',
  description:
    'Text only: no embeddings, no files. Streamed, so any size of account can be exported. Collections the calling key ' +
    'may not read are left out. The file is a valid body for POST /v1/memory/admin/import (format=pam: as its data). ' +
    "format=pam writes Portable AI Memory v1.0's memory-store.json instead (docs/import.md). REST only: over tRPC this procedure answers 400.",
  rest: { method: 'GET', path: '/v1/memory/admin/export', status: 200 },
  access: 'read',
  keyRole: 'admin',
  input: z.object({ format: z.enum(EXPORT_FORMATS).default('orgmem').describe("orgmem's own file, or pam: Portable AI Memory v1.0") }),
  output: z.union([
    z.object({
      version: z.literal(1),
      exported_at: z.string(),
      tenant: exportedTenant,
      collections: z.array(exportedCollection),
      memories: z.array(exportedMemory),
    }),
    z
      .object({
        schema: z.literal('portable-ai-memory'),
        schema_version: z.string(),
        owner: z.object({ id: z.string() }),
        memories: z.array(z.record(z.string(), z.unknown())),
      })
      .describe('format=pam: memory-store.json (docs/import.md)'),
  ]),
  handler: async (ctx, input) => exportAccount(ctx, input.format),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { tenantSchema } from '../src/schemas/access.ts';
import { collectionSchema, memorySchema } from '../src/schemas/memory.ts';
import { exportAccount } from '../src/services/memory/export.ts';

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
    'may not read are left out. The file is a valid body for POST /v1/memory/admin/import. REST only: over tRPC this ' +
    'procedure answers 400.',
  rest: { method: 'GET', path: '/v1/memory/admin/export', status: 200 },
  access: 'read',
  keyRole: 'admin',
  input: z.object({}),
  output: z.object({
    version: z.literal(1),
    exported_at: z.string(),
    tenant: exportedTenant,
    collections: z.array(exportedCollection),
    memories: z.array(exportedMemory),
  }),
  handler: async (ctx) => exportAccount(ctx),
});

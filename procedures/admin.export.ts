import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
import { memorySchema } from '../src/schemas.ts';
import { exportAccount } from '../src/services/export.ts';

// An exported memory is the memory as the API shows it, less its files (text only).
const exported = memorySchema.omit({ images: true });

export default defineProcedure({
  name: 'admin.export',
  summary: 'Download the account as one JSON file (Content-Disposition: attachment): tenant, collections, memories',
  description:
    'Text only: no embeddings, no files. Streamed, so any size of account can be exported. Collections the calling key ' +
    'may not read are left out. The file is a valid body for POST /v1/memory/admin/import. REST only: over tRPC this ' +
    'procedure answers 400.',
  rest: { method: 'GET', path: '/v1/memory/admin/export', status: 200 },
  access: 'read',
  input: z.object({}),
  output: z.object({
    version: z.literal(1),
    exported_at: z.string(),
    tenant: z.object({ id: z.string(), name: z.string(), email: z.string(), tier: z.string(), created_at: z.string() }),
    collections: z.array(z.object({ name: z.string(), description: z.string().nullable(), metadata: z.record(z.string(), z.unknown()), created_at: z.string() })),
    memories: z.array(exported),
  }),
  handler: async (ctx) => exportAccount(ctx),
});

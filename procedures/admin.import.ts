import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { importStatus, idempotencyKey } from '../src/schemas/memory.ts';
import { DEFAULT_IMPORT_COLLECTION, importAccount, importTargets } from '../src/services/memory/import.ts';

export default defineProcedure({
  name: 'admin.import',
  summary: 'Import memories (an export file works as is): texts re-embedded, collections created, new ids',
  description:
    'Each memory is a create body plus optional collection, pinned, archived and expires_at (the former name of valid_to); other fields are ignored. ' +
    `Target: into_collection if given, else the item's collection, else "${DEFAULT_IMPORT_COLLECTION}". Each item is validated on its own: ` +
    'invalid items and items for collections the key may not write are skipped and counted (errors lists the first 100). ' +
    'Listed collections are created with their description and metadata (ignored with into_collection). ' +
    'The body may be up to 64 MB; split larger files into several imports (the memories array can be cut anywhere). ' +
    'Memories are stored 100 at a time, each step committed with the import record: send an Idempotency-Key header (or idempotency_key) ' +
    'and sending the same body again (after a timeout, a dropped connection, a crash) resumes where it stopped or answers the finished ' +
    'import, storing nothing twice; GET /v1/memory/admin/import/{import} tells how far it got.',
  rest: { method: 'POST', path: '/v1/memory/admin/import', status: 200 },
  access: 'write',
  keyRole: 'admin',
  // Every collection named is checked; the items of those the key may not write are skipped and reported, not the call refused.
  collection: { collections: importTargets, permission: 'write', partial: true },
  // Page by page, so that a large import neither holds one long transaction nor all its embeddings.
  commits: 'in-steps',
  input: z.object({
    memories: z.array(z.unknown()).max(100_000),
    collections: z.array(z.unknown()).max(10_000).optional(),
    into_collection: collectionName.optional(),
    idempotency_key: idempotencyKey.optional(),
  }),
  errors: {
    UNPROCESSABLE_CONTENT: 'The Idempotency-Key was used with another body',
    CONFLICT: 'Another request is running the import of this Idempotency-Key',
    SERVICE_UNAVAILABLE: 'With an Idempotency-Key, a step could not be stored (the embedder failed): the import stops there, and the same request resumes it',
  },
  output: importStatus,
  handler: (ctx, input, grants) => importAccount(ctx, input, grants),
});

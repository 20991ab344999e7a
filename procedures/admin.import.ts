import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { importStatus, idempotencyKey } from '../src/schemas/memory.ts';
import { importFormatName } from '../src/services/memory/import-formats/index.ts';
import { DEFAULT_IMPORT_COLLECTION, importTargets, MAX_IMPORT_RECORDS, startImport } from '../src/services/memory/import.ts';

export default defineProcedure({
  name: 'admin.import',
  summary: "Import memories: an orgmem export, or another store's file (mem0, supermemory, Letta, Zep, Portable AI Memory); texts re-embedded, new ids",
  description:
    'Either memories (each a create body plus optional collection, pinned, archived and expires_at, the former name of valid_to; other fields are ignored) ' +
    'and collections, or data: a whole file, of the format named in format or detected (docs/import.md has each format and how its users, agents ' +
    'and runs map to collections and container_tag). A record of another store keeps its id there in metadata.import_source and its time as observed_at; ' +
    'importing the same file again stores none of it twice (already_imported counts them). ' +
    `Target: into_collection if given, else the item's collection (for another store's file, as docs/import.md maps it), else "${DEFAULT_IMPORT_COLLECTION}". ` +
    'Each item is validated on its own: invalid items (errors name the record and field) and items for collections the key may not write are skipped ' +
    'and counted (errors lists the first 100). Listed collections are created with their description and metadata (ignored with into_collection). ' +
    'The body may be up to 64 MB; split larger files into several imports (the memories array can be cut anywhere). ' +
    'The body is read and validated at once (a file of no known format is a 422 and nothing is stored); the answer is the import as it starts (202), ' +
    'and a background job stores its records 100 at a time, each step committed with its counts, resuming where it stopped after a crash: ' +
    'GET /v1/memory/admin/import/{import} tells how far it got and, if it failed, why. With an Idempotency-Key header (or idempotency_key) ' +
    'the same body sent again answers the same import, storing nothing twice, and queues a failed one again to resume it.',
  rest: { method: 'POST', path: '/v1/memory/admin/import', status: 202 },
  access: 'write',
  keyRole: 'admin',
  // Every collection named is checked; the items of those the key may not write are skipped and reported, not the call refused.
  collection: { collections: importTargets, permission: 'write', partial: true },
  input: z
    .object({
      memories: z.array(z.unknown()).max(MAX_IMPORT_RECORDS).optional().describe("orgmem's own items (an export's memories)"),
      collections: z.array(z.unknown()).max(10_000).optional(),
      data: z.unknown().optional().describe("A whole file: an orgmem export or another store's (see format)"),
      format: importFormatName.optional(),
      include_messages: z.boolean().default(false).describe("Letta: the agents' messages too, not only their memory blocks"),
      into_collection: collectionName.optional(),
      idempotency_key: idempotencyKey.optional(),
    })
    .refine((i) => (i.memories === undefined) !== (i.data === undefined), {
      message: 'send either memories (orgmem items) or data (a whole file)',
      path: ['data'],
    }),
  errors: {
    UNPROCESSABLE_CONTENT: 'The Idempotency-Key was used with another body; or data is no format the import knows, or not the one named',
  },
  output: importStatus,
  handler: (ctx, input, grants) => startImport(ctx, input, grants),
});

import { z } from 'zod';
import { scopeSchema } from './people.ts';
import { category, importance, instant, memoryText, metadataObject, timestamp } from './fields.ts';
import { quarantineSchema, trustClass } from './trust.ts';

/** A memory, its files and its collection as the API shows them. */
export const imageSchema = z
  .object({
    index: z.number().int(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int(),
    caption: z.string().nullable(),
    url: z.string().nullable().describe('Presigned GET (15 minutes) on single-memory GET; null in lists and search'),
  })
  .openapi('Image');

/** Where a memory came from, derived from what it stores (docs/time.md, "Provenance"). */
export const provenance = z
  .object({
    kind: z.enum(['api', 'remember', 'file', 'mail', 'connector', 'import']),
    memory_id: z.string().optional().describe('remember: the raw memory the fact was extracted from (the memory itself when it is the raw one)'),
    file_key: z.string().optional().describe('file: the key of the stored file'),
    file_url: z.string().optional().describe('file: presigned GET of the stored file (15 minutes), on single-memory GET only'),
    file_name: z.string().optional(),
    chunk: z.number().int().optional().describe('file: the chunk of its text, from 1'),
    page: z.number().int().optional().describe("file, a PDF's: the page its text starts on, from 1"),
    last_page: z.number().int().optional().describe("file, a PDF's: the page its text ends on, when it runs over more than one"),
    slide: z.number().int().optional().describe("file, a presentation's (PPTX): the slide its text starts on, from 1"),
    last_slide: z.number().int().optional().describe("file, a presentation's: the slide its text ends on, when it runs over more than one"),
    sheet: z.string().optional().describe("file, a spreadsheet's (XLSX): the name of the sheet its text starts on"),
    last_sheet: z.string().optional().describe("file, a spreadsheet's: the name of the sheet its text ends on, when it runs over more than one"),
    connection_id: z.string().optional(),
    record_id: z.string().optional().describe("connector: the provider's id of the record"),
    url: z.string().optional().describe("connector: the record's page at the provider"),
    message_id: z.string().optional().describe("mail: the message's Message-ID"),
    import_source: z.string().optional().describe("import: the record's key in the store it came from, `<format>:<its id there>` (none for an orgmem export)"),
  })
  .openapi('Provenance');

/** When a memory happened and when it holds (docs/time.md). */
export const memoryTimes = {
  observed_at: timestamp.describe('When its source says it happened (event time); its creation time unless given'),
  valid_from: timestamp.describe('When it starts to hold; observed_at unless given'),
  valid_to: timestamp.nullable().describe('When it stops holding: an expiry, a supersession or a retraction ("ended"); null while open'),
};

export const retraction = z
  .object({
    how: z.enum(['ended', 'wrong']).describe('ended: it stopped being true at `at`; wrong: it was never true'),
    at: timestamp.nullable().describe('ended: when it stopped being true'),
    reason: z.string().nullable(),
    retracted_at: timestamp.describe('When it was retracted (system time)'),
  })
  .openapi('Retraction');

export const memorySchema = z
  .object({
    id: z.string(),
    collection: z.string(),
    text: z.string(),
    importance: z.number(),
    category: z.string(),
    source: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    container_tag: z.string().nullable(),
    images: z.array(imageSchema),
    created_by: z.object({ id: z.string().nullable(), label: z.string().nullable() }),
    on_behalf_of: z
      .object({ id: z.string(), label: z.string() })
      .nullable()
      .describe('The person the agent that wrote it acts for (docs/people.md, "Agents act for a person"); null: it wrote for no person'),
    pinned: z.boolean(),
    archived: z.boolean(),
    ...memoryTimes,
    expires_at: timestamp.nullable().describe('valid_to, under its former name (kept for existing clients)'),
    created_at: timestamp.describe('When the store recorded it (system time)'),
    updated_at: timestamp,
    superseded_at: timestamp.nullable().describe('When a newer fact superseded it (system time)'),
    retraction: retraction.nullable().describe('Set while the memory is retracted (POST .../retract)'),
    provenance,
    trust: trustClass,
    quarantine: quarantineSchema
      .nullable()
      .describe('Set when its text was taken for an instruction to an agent: held (served to nobody), flagged, released or rejected (docs/trust.md)'),
  })
  .openapi('Memory');
export type Memory = z.infer<typeof memorySchema>;

/** How a memory is used (docs/search.md, "Recall counts"): on single-memory GET. */
export const memoryUse = z
  .object({
    recalls: z
      .number()
      .int()
      .describe('How many times search or the context endpoint handed it to a caller, on any front end; written within seconds of a recall'),
    last_recalled_at: timestamp.nullable().describe('When it was last recalled; null while never'),
    confirmations: z.number().int().describe('How many times remember met it again and confirmed it instead of storing a copy'),
    last_confirmed_at: timestamp.nullable().describe('When remember last confirmed it; null while never'),
  })
  .openapi('MemoryUse');
export type MemoryUse = z.infer<typeof memoryUse>;
export const memoryWithUse = memorySchema.extend({ use: memoryUse }).openapi('MemoryWithUse');

const supersededBy = z.string().nullable().describe('The id of the newer fact that superseded it; null while nothing has');
const historyEntry = z.object({
  memory: memorySchema,
  superseded_by: supersededBy,
  steps: z.number().int().describe('Supersessions between it and the memory asked about (1: directly)'),
});

/** A memory's supersession history both ways (docs/time.md, "Supersession"). */
export const memoryHistorySchema = z
  .object({
    memory: memorySchema,
    superseded_by: supersededBy,
    newer: z
      .array(historyEntry)
      .describe('The facts that superseded it: the one that replaced it (steps 1), then the one that replaced that, up to the newest'),
    older: z.array(historyEntry).describe('The facts it superseded, directly (steps 1) or through them (2 and more), newest supersession first at each step'),
  })
  .openapi('MemoryHistory');
export type MemoryHistory = z.infer<typeof memoryHistorySchema>;

type Times = { observed_at?: string; valid_from?: string; valid_to?: string | null };

/** A validity that ends before it starts is refused (422 naming valid_to); add it with `.superRefine` to a body with the times. */
export function timesInOrder(t: Times, ctx: z.RefinementCtx) {
  const from = t.valid_from ?? t.observed_at;
  if (t.valid_to && from && Date.parse(t.valid_to) <= Date.parse(from)) {
    ctx.addIssue({ code: 'custom', path: ['valid_to'], message: 'must be later than valid_from (or observed_at when valid_from is not given)' });
  }
}

/** The body that creates a memory (single, bulk item, import item). */
export const memoryCreate = z.object({
  text: memoryText,
  importance: importance.default(0.5),
  category: category.default('other'),
  source: z.string().min(1).max(64).default('api'),
  metadata: metadataObject.default({}),
  container_tag: z.string().min(1).max(256).nullable().default(null).describe('Optional sub-namespace, e.g. an end-user id'),
  observed_at: instant.optional().describe('When it happened, as its source says (ISO 8601 with offset); now when left out'),
  valid_from: instant.optional().describe('When it starts to hold; observed_at when left out'),
  valid_to: instant.nullable().optional().describe('When it stops holding (an expiry); open when left out'),
});
export type MemoryCreate = z.output<typeof memoryCreate>;

export const collectionSchema = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    memory_count: z.number().int().describe('The memories its listing shows by default: all but the archived ones'),
    archived_count: z.number().int().describe('Its archived memories, listed only on request (`include_archived`, `archived`)'),
    restricted: z.boolean(),
    ...scopeSchema.shape,
    created_at: timestamp,
    updated_at: timestamp.describe('When the collection or any of its memories last changed (ISO 8601 UTC with milliseconds)'),
  })
  .openapi('Collection');

/** A client's key for one import: the same key with the same body is the same import (docs/contract.md, "Retries and idempotency"). */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
  .describe('Names this import: sending the same body with the same key resumes or answers it, never stores twice (the Idempotency-Key header)');

/** An import as it stands: its answer, and its status while it runs or after it stopped. */
export const importStatus = z
  .object({
    import_id: z.string(),
    idempotency_key: z.string().nullable(),
    state: z
      .enum(['queued', 'running', 'done', 'failed'])
      .describe('queued or running: its job is storing it; done; failed: its job gave up (error says why), send the same request with the same key to resume'),
    complete: z.boolean().describe('true once every record is imported, skipped or already imported (state done)'),
    error: z.string().nullable().describe('Why the import failed, or why its last try failed while it is retried; null otherwise'),
    total: z.number().int().describe('Records read from the body'),
    imported: z.number().int(),
    skipped: z.number().int(),
    already_imported: z.number().int().describe("Records of another store's file that an earlier import stored: not stored again"),
    pending: z.number().int().describe('Items neither imported, skipped nor already imported yet'),
    collections: z.array(z.string()).describe('Collections the import created or wrote to'),
    errors: z.array(z.object({ index: z.number().int(), detail: z.string() })).describe('Why items were skipped (first 100)'),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Import');

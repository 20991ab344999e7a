import { z } from 'zod';
import { category, importance, memoryText, metadataObject, timestamp } from './fields.ts';

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
    pinned: z.boolean(),
    archived: z.boolean(),
    expires_at: timestamp.nullable().describe('Set on time-bound facts; the memory leaves search when it passes'),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Memory');
export type Memory = z.infer<typeof memorySchema>;

/** The body that creates a memory (single, bulk item, import item). */
export const memoryCreate = z.object({
  text: memoryText,
  importance: importance.default(0.5),
  category: category.default('other'),
  source: z.string().min(1).max(64).default('api'),
  metadata: metadataObject.default({}),
  container_tag: z.string().min(1).max(256).nullable().default(null).describe('Optional sub-namespace, e.g. an end-user id'),
});
export type MemoryCreate = z.output<typeof memoryCreate>;

export const collectionSchema = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    memory_count: z.number().int(),
    restricted: z.boolean(),
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
    complete: z.boolean().describe('false while it runs, or when it stopped (a crash, a dropped connection): send it again with the same key to resume'),
    total: z.number().int().describe('Items in the body'),
    imported: z.number().int(),
    skipped: z.number().int(),
    pending: z.number().int().describe('Items neither imported nor skipped yet'),
    collections: z.array(z.string()).describe('Collections the import created or wrote to'),
    errors: z.array(z.object({ index: z.number().int(), detail: z.string() })).describe('Why items were skipped (first 100)'),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Import');

import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Lets schemas carry `.openapi()` metadata for the generated document.
extendZodWithOpenApi(z);

/** Schemas shared by several procedures. Field rules come from api.md and decisions.md. */
export const collectionName = z
  .string()
  .regex(/^(?!\.)[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 . _ - and not start with "."')
  .describe('Collection name');

export const metadataObject = z
  .record(z.string(), z.unknown())
  .refine((m) => JSON.stringify(m).length <= 16_384, 'metadata must serialise to at most 16 KiB')
  .describe('Arbitrary JSON object, at most 16 KiB serialised');

export const category = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, 'must be a lowercase slug of 1 to 64 characters [a-z0-9_-]')
  .describe('fact, preference, episode, other, document, email, connector, or any lowercase slug');

export const memoryText = z.string().min(1).max(10_000).describe('1 to 10000 characters');
export const importance = z.number().min(0).max(1).describe('0 to 1');
export const timestamp = z.string().describe('ISO 8601 UTC with milliseconds');

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
    updated_at: timestamp,
  })
  .openapi('Collection');

/** Query-string booleans arrive as text; only these spellings are accepted. */
export const queryBool = z.preprocess(
  (v) => (v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v),
  z.boolean(),
);

export const noContent = z.null();

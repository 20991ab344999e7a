import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Memory } from '../../../schemas/memory.ts';
import { categoryFrom, isObject, issuesAt, kept, readRecord, sourceId, sourceTime, type ImportFormat } from './format.ts';

/**
 * Portable AI Memory (PAM) v1.0, its `memory-store.json`: read by the import and written by the
 * export (`format=pam`). What maps is in docs/import.md; orgmem's own fields that PAM has no place
 * for (collection, importance, container tag, pinned) travel in each memory's `metadata.orgmem`,
 * so an orgmem PAM export imports back as it was.
 */

export const PAM_SCHEMA = 'portable-ai-memory';
const PAM_VERSION = '1.0';
/** PAM's closed taxonomy; any other category is written as `custom` with the category as `custom_type`. */
const PAM_TYPES = new Set(['fact', 'preference', 'skill', 'context', 'relationship', 'goal', 'instruction', 'identity', 'environment', 'project']);
/** Statuses of memories no longer current: imported archived. */
const NOT_CURRENT = new Set(['superseded', 'retracted', 'archived']);
const COLLECTION = 'pam';

const orgmemFields = z.object({
  collection: z.string().optional(),
  importance: z.number().optional(),
  container_tag: z.string().nullable().optional(),
  pinned: z.boolean().optional(),
});

const pamMemory = z
  .object({
    id: sourceId,
    type: z.string().min(1),
    custom_type: z.string().nullish(),
    content: z.string(),
    content_hash: z.string().nullish(),
    status: z.string().nullish(),
    summary: z.string().nullish(),
    tags: z.array(z.string()).nullish(),
    confidence: z.object({ initial: z.number().nullish(), current: z.number().nullish() }).passthrough().nullish(),
    temporal: z.object({
      created_at: sourceTime,
      updated_at: sourceTime.nullish(),
      valid_from: sourceTime.nullish(),
      valid_until: sourceTime.nullish(),
      superseded_by: z.string().nullish(),
    }),
    provenance: z.record(z.string(), z.unknown()).nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
  })
  .superRefine((m, ctx) => {
    // The memory's own integrity: a hash PAM's way (sha256:...) that its content no longer gives means the content was changed.
    if (m.content_hash?.startsWith('sha256:') && m.content_hash !== pamContentHash(m.content))
      ctx.addIssue({
        code: 'custom',
        path: ['content_hash'],
        message: "does not match the content (PAM's normalised SHA-256): the memory was changed after it was hashed",
      });
  });

/** A relation between two memories of the file. */
const pamRelation = z.object({ from: sourceId, to: sourceId, type: z.string().min(1).max(64) });

/**
 * The file's relations, by the memory they start from: each `{type, to}` with `to` the import
 * key of the other memory (its `metadata.import_source`), so the link survives the new ids. A
 * relation that is malformed or names a memory not in the file is left out.
 */
function relationsFrom(relations: unknown, ids: Set<string>, ownerId: string): Map<string, Array<{ type: string; to: string }>> {
  const byFrom = new Map<string, Array<{ type: string; to: string }>>();
  for (const raw of Array.isArray(relations) ? relations : []) {
    const r = pamRelation.safeParse(raw).data;
    if (!r || !ids.has(r.from) || !ids.has(r.to)) continue;
    byFrom.set(r.from, [...(byFrom.get(r.from) ?? []), { type: r.type, to: `pam:${ownerId}/${r.to}` }]);
  }
  return byFrom;
}

const owner = z.object({ id: z.string().min(1) }).passthrough();

export const pam: ImportFormat = {
  name: 'pam',
  label: 'Portable AI Memory v1.0 (`memory-store.json`)',
  detect: (data) => isObject(data) && data.schema === PAM_SCHEMA,
  parse: (data) => {
    if (!isObject(data) || data.schema !== PAM_SCHEMA || !Array.isArray(data.memories)) return `a PAM file is {"schema": "${PAM_SCHEMA}", "memories": [...]}`;
    if (typeof data.schema_version !== 'string' || !data.schema_version.startsWith('1.')) {
      return `schema_version ${JSON.stringify(data.schema_version)} is not supported: PAM 1.x is`;
    }
    const ownerParsed = owner.safeParse(data.owner);
    if (!ownerParsed.success) return issuesAt('owner', ownerParsed.error);
    const ownerId = ownerParsed.data.id;
    const ids = new Set(data.memories.flatMap((m: unknown) => (isObject(m) ? (sourceId.safeParse(m.id).data ?? []) : [])));
    const relations = relationsFrom(data.relations, ids, ownerId);
    return data.memories.map((raw: unknown, i: number) =>
      readRecord(`memories.${i}`, raw, pamMemory, (m) => {
        const { orgmem: extra, ...metadata } = m.metadata ?? {};
        const ours = orgmemFields.safeParse(extra ?? {}).data ?? {};
        return {
          // PAM ids need only be unique in their file: the owner makes them unique here.
          sourceId: `${ownerId}/${m.id}`,
          item: {
            text: m.content,
            category: categoryFrom(m.type === 'custom' ? m.custom_type : m.type, 'fact'),
            importance: ours.importance,
            metadata: {
              ...metadata,
              ...(relations.has(m.id) && { relations: relations.get(m.id) }),
              source_fields: kept({
                id: m.id,
                type: m.type,
                status: m.status,
                summary: m.summary,
                tags: m.tags,
                confidence: m.confidence?.current,
                platform: m.provenance?.platform,
              }),
            },
            collection: ours.collection ?? COLLECTION,
            container_tag: ours.container_tag !== undefined ? ours.container_tag : ownerId,
            pinned: ours.pinned ?? false,
            observed_at: m.temporal.created_at,
            valid_from: m.temporal.valid_from ?? undefined,
            valid_to: m.temporal.valid_until ?? undefined,
            archived: NOT_CURRENT.has(m.status ?? 'active'),
          },
        };
      }),
    );
  },
};

/** PAM's content hash: SHA-256 of the text trimmed, lowercased, NFC-normalised, runs of spaces made one. */
export function pamContentHash(text: string): string {
  const normalized = text.trim().toLowerCase().normalize('NFC').replace(/ {2,}/g, ' ');
  return `sha256:${createHash('sha256').update(normalized, 'utf8').digest('hex')}`;
}

/** The root of a PAM export, up to its memories array. */
export function pamHead(ownerId: string, exportId: string, exportDate: string) {
  return {
    schema: PAM_SCHEMA,
    schema_version: PAM_VERSION,
    export_id: exportId,
    exported_by: 'orgmem/1.0.0',
    export_date: exportDate,
    export_type: 'full',
    owner: { id: ownerId },
  };
}

const pamStatus = (m: Memory) => (m.retraction?.how === 'wrong' ? 'retracted' : m.superseded_at ? 'superseded' : m.archived ? 'archived' : 'active');

/** One memory in PAM's shape. */
export function toPam(m: Memory) {
  const type = PAM_TYPES.has(m.category) ? m.category : 'custom';
  return {
    id: m.id,
    type,
    custom_type: type === 'custom' ? m.category : null,
    status: pamStatus(m),
    content: m.text,
    content_hash: pamContentHash(m.text),
    temporal: { created_at: m.observed_at, updated_at: m.updated_at, valid_from: m.valid_from, valid_until: m.valid_to },
    provenance: { platform: 'orgmem', extraction_method: 'api_export', extracted_at: m.created_at },
    metadata: {
      ...m.metadata,
      orgmem: { collection: m.collection, importance: m.importance, container_tag: m.container_tag, pinned: m.pinned, source: m.source },
    },
  };
}

import { z } from 'zod';
import { atIndex, isObject, kept, listIn, readRecord, sourceId, sourceTime, type ImportFormat, type SourceRecord } from './format.ts';

const COLLECTION = 'supermemory';
const metadata = z.record(z.string(), z.unknown()).nullish();

/** A memory entry (what supermemory extracts from documents): listed on its own or under its document. */
const entry = z.object({
  id: sourceId,
  memory: z.string(),
  createdAt: sourceTime.nullish(),
  updatedAt: sourceTime.nullish(),
  isForgotten: z.boolean().nullish(),
  forgetAfter: sourceTime.nullish(),
  isLatest: z.boolean().nullish(),
  version: z.number().nullish(),
  spaceContainerTag: z.string().nullish(),
  containerTag: z.string().nullish(),
  metadata,
});

/** A document of the documents list (`POST /v3/documents/list`) or of the web app's export. */
const document = z
  .object({
    id: sourceId,
    customId: z.string().nullish(),
    title: z.string().nullish(),
    summary: z.string().nullish(),
    content: z.string().nullish(),
    url: z.string().nullish(),
    type: z.string().nullish(),
    status: z.string().nullish(),
    containerTags: z.array(z.string()).nullish(),
    metadata,
    createdAt: sourceTime.nullish(),
    updatedAt: sourceTime.nullish(),
  })
  .refine((d) => !!(d.content || d.summary || d.title), { message: 'a document needs content, summary or title', path: ['content'] });

const entryRecord = (at: string, raw: unknown, tag?: string | null): SourceRecord =>
  readRecord(at, raw, entry, (e) => ({
    sourceId: e.id,
    item: {
      text: e.memory,
      category: 'fact',
      metadata: { ...e.metadata, source_fields: kept({ kind: 'memory', is_latest: e.isLatest, version: e.version, updated_at: e.updatedAt }) },
      collection: COLLECTION,
      container_tag: e.spaceContainerTag ?? e.containerTag ?? tag ?? null,
      observed_at: e.createdAt ?? undefined,
      valid_to: e.forgetAfter ?? undefined,
      archived: e.isForgotten ?? false,
    },
  }));

/** A document, then the memory entries it holds (`memoryEntries`, as the web app exports them). */
function documentRecords(at: string, raw: unknown): SourceRecord[] {
  const doc = readRecord(at, raw, document, (d) => ({
    sourceId: d.id,
    item: {
      text: (d.content || d.summary || d.title)!,
      category: 'document',
      metadata: {
        ...d.metadata,
        source_fields: kept({
          kind: 'document',
          custom_id: d.customId,
          title: d.title,
          url: d.url,
          type: d.type,
          container_tags: d.containerTags,
          updated_at: d.updatedAt,
        }),
      },
      collection: COLLECTION,
      container_tag: d.containerTags?.[0] ?? null,
      observed_at: d.createdAt ?? undefined,
    },
  }));
  const entries = isObject(raw) && Array.isArray(raw.memoryEntries) ? (raw.memoryEntries as unknown[]) : [];
  const tag = isObject(raw) && Array.isArray(raw.containerTags) && typeof raw.containerTags[0] === 'string' ? raw.containerTags[0] : null;
  return [doc, ...entries.map((e, j) => entryRecord(`${at}.memoryEntries.${j}`, e, tag))];
}

const SUPERMEMORY_KEYS = ['containerTags', 'customId', 'memoryEntries', 'createdAt', 'spaceContainerTag'];
const KEYS = ['memories', 'documents', 'results'];

/**
 * supermemory: its documents list (`{memories: [...], pagination}`: documents, despite the key),
 * the web app's export (`{documents: [...]}`, each with its `memoryEntries`), or a list of memory
 * entries. A document is one memory (its content, else summary, else title); each entry another.
 * The first container tag is the container tag; everything goes to one collection.
 */
export const supermemory: ImportFormat = {
  name: 'supermemory',
  label: 'supermemory (documents list, memory entries, web app export)',
  detect: (data) => {
    const first = listIn(data, KEYS)?.items[0];
    return isObject(first) && SUPERMEMORY_KEYS.some((k) => k in first);
  },
  parse: (data) => {
    const list = listIn(data, KEYS);
    if (!list) return 'a supermemory file is a list, {"memories": [...]} or {"documents": [...]}';
    return list.items.flatMap((raw, i) => {
      const at = atIndex(list.key, i);
      return isObject(raw) && typeof raw.memory === 'string' ? [entryRecord(at, raw)] : documentRecords(at, raw);
    });
  },
};

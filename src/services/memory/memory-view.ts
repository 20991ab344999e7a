import { iso } from '../../core/ids.ts';
import type { Memory } from '../../schemas/memory.ts';

/** A memory as stored, and as the API shows it. */
export interface MemoryRow {
  id: string;
  collection: string;
  text: string;
  importance: number;
  category: string;
  source: string;
  metadata: Record<string, unknown>;
  container_tag: string | null;
  images: Array<Omit<Memory['images'][number], 'url'> & { key?: string }>;
  created_by_id: string | null;
  created_by_label: string | null;
  pinned: boolean;
  archived: boolean;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Columns of a memory as the API shows it (never the embedding). */
export const MEMORY_COLUMNS = `id, collection, text, importance, category, source, metadata, container_tag, images,
  created_by_id, created_by_label, pinned, archived, expires_at, created_at, updated_at`;

export function memoryView(r: MemoryRow): Memory {
  return {
    id: r.id,
    collection: r.collection,
    text: r.text,
    importance: r.importance,
    category: r.category,
    source: r.source,
    metadata: r.metadata,
    container_tag: r.container_tag,
    images: r.images.map(({ key: _key, ...img }) => ({ ...img, url: null })),
    created_by: { id: r.created_by_id, label: r.created_by_label },
    pinned: r.pinned,
    archived: r.archived,
    expires_at: iso(r.expires_at),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/** Readable and current: not archived, neither superseded nor expired (digests, dedup). */
export const LIVE = `not archived and superseded_by is null and (expires_at is null or expires_at > now())`;

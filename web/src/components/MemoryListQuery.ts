import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc } from '../api.ts';

/** The memory list's filters and page, kept in the URL so Back from a memory returns to the same view. */
export interface MemoryListFilters {
  category: string;
  tag: string;
  pinned: 'any' | 'yes' | 'no';
  archived: 'hide' | 'include' | 'only';
  limit: number;
  offset: number;
}

export const MEMORY_PAGE_SIZES = [10, 25, 50, 100];

export function memoryFiltersFrom(params: URLSearchParams): MemoryListFilters {
  const pick = <T extends string>(value: string | null, allowed: readonly T[], fallback: T): T => (allowed.includes(value as T) ? (value as T) : fallback);
  const limit = Number(params.get('limit'));
  const offset = Number(params.get('offset'));
  return {
    category: params.get('category') ?? '',
    tag: params.get('tag') ?? '',
    pinned: pick(params.get('pinned'), ['any', 'yes', 'no'] as const, 'any'),
    archived: pick(params.get('archived'), ['hide', 'include', 'only'] as const, 'hide'),
    limit: MEMORY_PAGE_SIZES.includes(limit) ? limit : 25,
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
  };
}

/** The URL parameters of a filter set; defaults are left out to keep links short. */
export function memoryFiltersToParams(f: MemoryListFilters): Record<string, string> {
  const p: Record<string, string> = {};
  if (f.category) p.category = f.category;
  if (f.tag) p.tag = f.tag;
  if (f.pinned !== 'any') p.pinned = f.pinned;
  if (f.archived !== 'hide') p.archived = f.archived;
  if (f.limit !== 25) p.limit = String(f.limit);
  if (f.offset) p.offset = String(f.offset);
  return p;
}

export interface MemoryListPage {
  items: Memory[];
  hasMore: boolean;
}

/** One page of a collection's memories, pinned first then newest, filtered by the list API itself. */
export async function loadMemoryListPage(collection: string, f: MemoryListFilters): Promise<MemoryListPage> {
  const rows = await rpc.memories.list.query({
    collection,
    // One more than the page tells whether there is a next page.
    limit: f.limit + 1,
    offset: f.offset,
    include_archived: f.archived === 'include',
    archived: f.archived === 'only' ? true : undefined,
    category: f.category || undefined,
    container_tag: f.tag || undefined,
    pinned: f.pinned === 'any' ? undefined : f.pinned === 'yes',
  });
  return { items: rows.slice(0, f.limit), hasMore: rows.length > f.limit };
}

import { iso } from '../../core/ids.ts';
import type { Memory } from '../../schemas/memory.ts';
import type { Quarantine, TrustClass } from '../../schemas/trust.ts';
import { provenanceOf } from './provenance.ts';

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
  on_behalf_of_id: string | null;
  on_behalf_of_label: string | null;
  pinned: boolean;
  archived: boolean;
  observed_at: Date;
  valid_from: Date;
  valid_to: Date | null;
  created_at: Date;
  updated_at: Date;
  superseded_at: Date | null;
  retraction: StoredRetraction | null;
  trust: TrustClass;
  /** Never served while true (docs/trust.md, "Quarantine"). */
  held: boolean;
  quarantine: Quarantine | null;
}

/** The retraction column (migration 021): the API's retraction plus the valid_to it replaced, so that it can be undone. */
export interface StoredRetraction {
  how: 'ended' | 'wrong';
  at: string | null;
  reason: string | null;
  retracted_at: string;
  valid_to_before: string | null;
}

/** Columns of a memory as the API shows it (never the embedding). */
export const MEMORY_COLUMNS = `id, collection, text, importance, category, source, metadata, container_tag, images,
  created_by_id, created_by_label, on_behalf_of_id, on_behalf_of_label, pinned, archived, observed_at, valid_from, valid_to, created_at, updated_at, superseded_at, retraction,
  trust, held, quarantine`;

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
    on_behalf_of: r.on_behalf_of_id ? { id: r.on_behalf_of_id, label: r.on_behalf_of_label ?? '' } : null,
    pinned: r.pinned,
    archived: r.archived,
    observed_at: iso(r.observed_at)!,
    valid_from: iso(r.valid_from)!,
    valid_to: iso(r.valid_to),
    expires_at: iso(r.valid_to),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    superseded_at: iso(r.superseded_at),
    retraction: r.retraction && { how: r.retraction.how, at: r.retraction.at, reason: r.retraction.reason, retracted_at: r.retraction.retracted_at },
    provenance: provenanceOf(r),
    trust: r.trust,
    quarantine: r.quarantine,
  };
}

/** Not retracted as wrong, for a row aliased `m` (a retraction as ended closes valid_to instead). */
const notWrong = (m: string) => `(${m}.retraction is null or ${m}.retraction->>'how' <> 'wrong')`;

/**
 * Current, for a row aliased `m`: neither held in quarantine (docs/trust.md), superseded,
 * retracted as wrong nor past its validity (docs/time.md). A fact whose validity starts later is
 * current already: a client's clock slightly ahead must not hide what it just stored.
 */
export const currentSql = (m: string) => `not ${m}.held and ${m}.superseded_by is null and ${notWrong(m)} and (${m}.valid_to is null or ${m}.valid_to > now())`;

/**
 * Valid at a moment `at` (a parameter), for a row aliased `m`: inside its validity, superseded or
 * not, and never when retracted as wrong (docs/time.md, "Search") or held in quarantine.
 */
export const validAtSql = (m: string, at: string) =>
  `not ${m}.held and ${m}.valid_from <= ${at}::timestamptz and (${m}.valid_to is null or ${m}.valid_to > ${at}::timestamptz) and ${notWrong(m)}`;

/**
 * The facets index's expression (migrations 008 and 037) for a row aliased `m`: the memory's
 * category (c), container tag (t) and metadata (m) under its tenant's id, so every key of the
 * index is one tenant's. Every containment test on a memory's metadata goes through it (the
 * metadata column has no index of its own since migration 038).
 */
export const facetsSql = (m: string) => `memory_facets(${m}.tenant_id, ${m}.category, ${m}.container_tag, ${m}.metadata)`;

/** The value facetsSql contains for a memory of `tenantId` whose metadata contains `metadata`. */
export const metadataFacets = (tenantId: string, metadata: object) => ({ [tenantId]: { m: metadata } });

/** Readable and current: not archived, neither superseded, retracted nor expired (digests, dedup). */
export const LIVE = `not memories.archived and ${currentSql('memories')}`;

import type { Queryable } from '../../ports/db/db.ts';
import { facetsSql, metadataFacets } from '../memory/memory-view.ts';
import { COLUMNS, scored, type CandidateRow } from './candidates.ts';
import { NO_FILTERS, where, type Filters, type Scope } from './scope.ts';

/**
 * The provenance that orders memories among others: a file's chunks (metadata `key`, `chunk`:
 * what file ingestion writes, docs/files.md) and a thread's turns (metadata `thread`, `seq`: what
 * a client writes for a conversation, bench/locomo/run.ts). A file first, as provenanceOf reads it.
 */
const LINKS = [
  { group: 'key', place: 'chunk' },
  { group: 'thread', place: 'seq' },
] as const;

interface Place {
  collection: string;
  group: (typeof LINKS)[number]['group'];
  id: string;
  at: number;
}

/** Where a memory sits: the first link whose group is a non-empty string and whose place an integer; null when none. */
export function placeOf(row: { collection: string; metadata: Record<string, unknown> }): Place | null {
  for (const { group, place } of LINKS) {
    const id = row.metadata[group];
    const at = row.metadata[place];
    if (typeof id === 'string' && id && typeof at === 'number' && Number.isInteger(at)) return { collection: row.collection, group, id, at };
  }
  return null;
}

const placeKey = (p: Place) => JSON.stringify([p.collection, p.group, p.id, p.at]);
const linkOf = (group: Place['group']) => LINKS.find((l) => l.group === group)!;

export type Neighbour = CandidateRow & { offset: number };

/**
 * The memories up to `n` places before and after each result in its file or thread, in the
 * result's collection (so readable whenever the result is), by offset. They follow the search's
 * currentness (`as_of`) and `include_archived`, not its other filters: a neighbour is the
 * result's context, whatever its category or tags. One statement: every wanted place is one
 * containment value (at most 50 x 2 x MAX_NEIGHBOURS), which the facets index answers, or
 * the collection's own index when the planner finds it smaller. The values go as text: a JSON
 * string bound as jsonb would be a jsonb string, not an object.
 */
export async function loadNeighbours(
  db: Queryable,
  scope: Pick<Scope, 'tenantId'>,
  filters: Pick<Filters, 'as_of' | 'include_archived'>,
  results: CandidateRow[],
  n: number,
): Promise<Map<string, Neighbour[]>> {
  const out = new Map(results.map((r) => [r.id, [] as Neighbour[]]));
  const places = results.flatMap((r) => {
    const p = placeOf(r);
    return p ? [{ id: r.id, place: p }] : [];
  });
  if (!places.length || n < 1) return out;
  const wanted = new Map<string, Array<{ id: string; offset: number }>>();
  const values: object[] = [];
  for (const { id, place } of places) {
    for (let offset = -n; offset <= n; offset++) {
      if (offset === 0) continue;
      const at = { ...place, at: place.at + offset };
      const key = placeKey(at);
      if (!wanted.has(key)) values.push(metadataFacets(scope.tenantId, { [place.group]: place.id, [linkOf(place.group).place]: at.at }));
      wanted.set(key, [...(wanted.get(key) ?? []), { id, offset }]);
    }
  }
  const params: unknown[] = [];
  const collections = [...new Set(places.map((p) => p.place.collection))];
  const cond = where({ tenantId: scope.tenantId, collections }, { ...NO_FILTERS, ...filters }, params, {});
  const rows = await db.query<CandidateRow>(
    `select ${COLUMNS} from memories m where ${cond} and ${facetsSql('m')} @> any($${params.push(values.map((v) => JSON.stringify(v)))}::text[]::jsonb[])`,
    params,
  );
  for (const row of rows) {
    const p = placeOf(row);
    for (const { id, offset } of (p && wanted.get(placeKey(p))) || []) out.get(id)!.push({ ...scored(row, 0), offset });
  }
  for (const list of out.values()) list.sort((a, b) => a.offset - b.offset || (a.id < b.id ? -1 : 1));
  return out;
}

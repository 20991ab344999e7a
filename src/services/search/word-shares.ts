import type { App } from '../../core/context.ts';

/**
 * The share of all memories that hold each of the commonest lexemes, from PostgreSQL's own
 * statistics of `memories.tsv` (ANALYZE keeps the most common elements of a tsvector column with
 * their frequencies), and `floor`, the least listed share: a lexeme not listed is rarer than
 * about that. Null while the table has no such statistics (before its first ANALYZE; on Citus,
 * whose coordinator keeps none for a distributed table).
 */
export interface WordShares {
  shares: Map<string, number>;
  floor: number;
}

/** How long a process keeps them: the service's ANALYZE runs about as often (services/memory/table-stats.ts). */
const TTL_MS = 60_000;

const perApp = new WeakMap<App, { at: number; value: Promise<WordShares | null> }>();

export function wordShares(app: App): Promise<WordShares | null> {
  const hit = perApp.get(app);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
  const value = app.db
    .query<{ elems: string[] | null; freqs: number[] | null }>(
      `select most_common_elems::text::text[] as elems, most_common_elem_freqs::float8[] as freqs from pg_stats
        where schemaname = current_schema() and tablename = 'memories' and attname = 'tsv'`,
    )
    .then(([row]) => {
      // The frequencies list one a lexeme, then their minimum and maximum.
      if (!row?.elems?.length || !row.freqs || row.freqs.length < row.elems.length) return null;
      const shares = new Map(row.elems.map((l, i) => [l, row.freqs![i]!]));
      return { shares, floor: Math.min(...shares.values()) };
    });
  // A failed read is tried again by the next search, not remembered.
  value.catch(() => perApp.delete(app));
  perApp.set(app, { at: Date.now(), value });
  return value;
}

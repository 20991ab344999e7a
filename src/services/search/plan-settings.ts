/**
 * The planner settings search needs, applied without statements or round trips of their own
 * (a hybrid search paid BEGIN, a settings statement and COMMIT per side; docs/search.md, "Round trips"). Custom plans
 * for every statement are the database port's connection setting (src/ports/db/postgres.ts).
 */

/**
 * The settings an unfiltered HNSW graph search reads while it runs, as a one-time filter of the
 * search itself (`ef` is the SQL of hnsw.ef_search's value): pgvector reads them when the index
 * scan returns its first row, after the filter has run; local, so they end with the statement.
 * No `enable_sort`: without a filter the planner takes the graph
 * for a scope this large by itself, given statistics (the service keeps them fresh,
 * services/memory/table-stats.ts); measured at 100k down to a 2k-memory collection.
 */
export const graphSettingsFilter = (ef: string) =>
  `(select set_config('hnsw.iterative_scan', 'relaxed_order', true)
     || set_config('hnsw.ef_search', ${ef}, true)) is not null`;

/**
 * The settings of a filtered HNSW graph search, for its transaction. `enable_sort` is read while planning,
 * so it cannot sit in the statement it governs: the caller sends these statements and the search
 * in one flight (pipelined, no round trip between them), inside the transaction that scopes them.
 * SET LOCAL rather than set_config: on Citus only a SET LOCAL reaches the worker that plans the
 * shard's query (every connection sets citus.propagate_set_commands, src/ports/db/postgres.ts; docs/citus.md).
 * `ef` is hnsw.ef_search, a number.
 */
export const graphSettings = (ef: string) =>
  `set local enable_sort = off; set local hnsw.iterative_scan = relaxed_order; set local hnsw.ef_search = ${Math.trunc(Number(ef))}`;

-- One index for searches that combine filters. Category, container tag and metadata each have an
-- index (migration 003), and when a search combined a broad filter with a narrow one the planner
-- ANDed their bitmaps: for a category holding 27% of 1M memories and a metadata filter of 4k, it
-- built a 272k-entry bitmap (40 ms) to save visiting 3k rows (docs/search.md). With the three in
-- one jsonb value under one GIN index, combined filters are one containment test, and GIN
-- intersects the posting lists of its keys itself, skipping through a broad key's list by the
-- narrow one's entries. Single filters keep their own indexes: every row this index finds is
-- rechecked by computing its facets again (about 2 µs), which only pays off when the
-- intersection is narrower than any one filter.
create function memory_facets(category text, container_tag text, metadata jsonb) returns jsonb
  language sql immutable parallel safe as $fn$
  select jsonb_build_object('c', category, 't', container_tag, 'm', metadata)
$fn$;
create index memories_facets on memories using gin (memory_facets(category, container_tag, metadata) jsonb_path_ops);

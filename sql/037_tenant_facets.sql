-- The filters' index (migration 008) by tenant, which a metadata filter alone now uses too
-- (src/services/search/scope.ts). jsonb_path_ops hashes each value with
-- the whole path of keys above it, so with the tenant's id as the document's top key every key of
-- the index belongs to one tenant: a filtered search intersects that tenant's lists and visits
-- that tenant's rows. Over the whole table, a filter matching 85 memories of one tenant at 1M
-- intersected lists holding a quarter of all memories and visited 1,055 rows of 626 tenants to
-- drop 970 (bench/README.md, "Why the category + metadata filter grows with the table").
create function memory_facets(tenant_id uuid, category text, container_tag text, metadata jsonb) returns jsonb
  language sql immutable parallel safe as $fn$
  select jsonb_build_object(tenant_id::text, jsonb_build_object('c', category, 't', container_tag, 'm', metadata))
$fn$;
drop index memories_facets;
create index memories_facets on memories using gin (memory_facets(tenant_id, category, container_tag, metadata) jsonb_path_ops);
drop function memory_facets(text, text, jsonb);
-- The planner knows an expression index's values only after ANALYZE; until then it took the new
-- index for a hundred times its matches and ANDed it with the scope's whole list.
analyze memories;

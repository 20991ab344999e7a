-- A memory's metadata is searched only through the facets index by tenant (migration 037;
-- facetsSql in src/services/memory/memory-view.ts): the filters, a result's neighbours in its
-- file or thread, and the inbound mail's duplicate check. The metadata column's own index was
-- the whole table's (a tenant's keys mixed with every other tenant's) and one more GIN index for
-- every row written.
drop index if exists memories_metadata;

-- The vector graph holds only the memories of tenants large enough to need it (docs/search.md,
-- "Which tenants the graph holds"). A small tenant's searches read its memories exactly, so its
-- rows in the graph were only a cost: every insert's graph walk, every other tenant's walk
-- stepping over them, and their pages in memory.
--
-- A memory's `graphed` says whether the index holds it; the index is partial on it. Rows written
-- before this migration stay in the graph, and their tenants are marked ready below, so an
-- existing database searches as it did; `orgmem vector-storage` rebuilds the index as partial.
alter table memories add column graphed boolean not null default true;

-- A tenant whose memories go into the graph. 'filling': new memories are graphed, older ones are
-- being added (searches still read exactly); 'ready': every memory is graphed. No row: none are.
create table graph_tenants (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  state text not null check (state in ('filling', 'ready')),
  -- the last failed try of the fill, shown with the tenant's pipeline health until one succeeds
  error text,
  updated_at timestamptz not null default now()
);

insert into graph_tenants (tenant_id, state) select distinct tenant_id, 'ready' from collections;

-- A database without memories gets the partial index now (same definition, a WHERE added).
do $$
declare def text;
begin
  if not exists (select 1 from memories) then
    select pg_get_indexdef('memories_embedding'::regclass) into def;
    drop index memories_embedding;
    execute def || ' where graphed';
  end if;
end $$;

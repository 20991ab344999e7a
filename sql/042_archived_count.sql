-- A collection's archived memories, kept by every memory write beside memory_count (which holds
-- them too), so that listing collections answers how many memories a listing shows, and how many
-- are archived, without counting rows (docs/rest.md, "Collections and memories").
alter table collections add column archived_count bigint not null default 0;

update collections c set archived_count = a.n
  from (select tenant_id, collection, count(*) as n from memories where archived group by tenant_id, collection) a
 where c.tenant_id = a.tenant_id and c.name = a.collection;

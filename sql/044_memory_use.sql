-- How a memory is used: how often search and context handed it to a caller (recalls), and how
-- often remember met it again and confirmed it instead of storing a copy (confirmations). Kept
-- beside the memory rather than on its row: an update of a memory row writes a new entry in every
-- one of its indexes (the vector graph's included), and a recall is counted far more often than a
-- memory changes. Recalls are added up in the process and written in batches (docs/search.md,
-- "Recall counts"); a memory's deletion takes its row with it.
create table memory_use (
  tenant_id uuid not null,
  memory_id uuid not null,
  recalls bigint not null default 0,
  last_recalled_at timestamptz(3),
  confirmations int not null default 0,
  last_confirmed_at timestamptz(3),
  primary key (tenant_id, memory_id),
  foreign key (tenant_id, memory_id) references memories (tenant_id, id) on delete cascade
);

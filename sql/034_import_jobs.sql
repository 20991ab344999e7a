-- Imports run as background jobs (docs/import.md): the request validates the file, stages its
-- valid records here in the file's order and answers at once; the job stores them 100 at a time
-- from `processed` on, each step committed with the import's counts, so a process that dies
-- mid-import resumes at the first record not stored, storing nothing twice and losing nothing.
alter table imports add column state text not null default 'done' check (state in ('queued', 'running', 'done', 'failed'));
alter table imports add column error text;
-- The key that sent the import: its job stores as that key, under its grants as they are then.
alter table imports add column agent_id uuid;
-- The collections the body listed, created with the import: the status names them once it is done.
alter table imports add column listed jsonb not null default '[]'::jsonb;
-- An import left incomplete by a request of the version before jobs has no staged records: the
-- same request (its Idempotency-Key) stages them again and resumes where it stopped.
update imports set state = 'failed', error = 'Stopped before it was complete: send the same request with the same Idempotency-Key to resume it'
 where completed_at is null;
create table import_records (
  tenant_id uuid not null,
  import_id uuid not null,
  -- The record's place among the import's valid records: the job stores them in this order.
  position int not null,
  -- Its index in the file, which errors name.
  source_index int not null,
  collection text not null,
  -- "<format>:<its id there>" for another store's record (metadata.import_source), else null.
  source_key text,
  -- The memory to create, validated.
  item jsonb not null,
  primary key (tenant_id, import_id, position),
  foreign key (tenant_id, import_id) references imports (tenant_id, id) on delete cascade
);

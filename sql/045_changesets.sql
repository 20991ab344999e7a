-- Consolidation (docs/consolidation.md): a run over one collection proposes a change set, a list
-- of changes reviewed and applied one by one, each undoable. A change keeps the memories it
-- touches, its evidence, and once applied the state of each memory before and after, so an undo
-- restores exactly what was there and refuses when the memory moved on since.
create table changesets (
  tenant_id uuid not null,
  id uuid not null,
  collection text not null,
  state text not null default 'running',
  trigger text not null,
  agent_id uuid,
  similarity double precision not null,
  scanned int not null default 0,
  errors jsonb not null default '[]'::jsonb,
  error text,
  took_ms int,
  created_at timestamptz(3) not null default now(),
  finished_at timestamptz(3),
  reviewed_at timestamptz(3),
  primary key (tenant_id, id),
  foreign key (tenant_id, collection) references collections (tenant_id, name) on delete cascade on update cascade
);
create index changesets_recent on changesets (tenant_id, collection, created_at desc);

create table changeset_changes (
  tenant_id uuid not null,
  changeset_id uuid not null,
  id uuid not null,
  position int not null,
  kind text not null,
  state text not null default 'proposed',
  memory_ids uuid[] not null,
  proposal jsonb not null,
  evidence jsonb not null,
  applied jsonb,
  detail text,
  applied_at timestamptz(3),
  undone_at timestamptz(3),
  primary key (tenant_id, changeset_id, id),
  foreign key (tenant_id, changeset_id) references changesets (tenant_id, id) on delete cascade
);

-- A collection's consolidation schedule, off unless set, and the kinds its runs apply at once.
create table consolidation_settings (
  tenant_id uuid not null,
  collection text not null,
  every_days int,
  auto_apply text[] not null default '{}',
  next_run_at timestamptz(3),
  primary key (tenant_id, collection),
  foreign key (tenant_id, collection) references collections (tenant_id, name) on delete cascade on update cascade
);
create index consolidation_due on consolidation_settings (next_run_at) where next_run_at is not null;

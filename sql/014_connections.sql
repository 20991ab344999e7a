-- Managed connectors (src/services/connectors). A connection reads one provider into one
-- collection; its credentials are sealed by the secrets port and never leave this table.
create table connections (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  provider text not null,
  name text,
  collection text not null,
  container_tag text,
  config jsonb not null default '{}'::jsonb,
  credentials text not null,
  status text not null default 'active' check (status in ('active', 'paused', 'error')),
  last_error text,
  cursor text,
  -- consecutive failed syncs: the fifth pauses the connection
  failures int not null default 0,
  last_sync_at timestamptz,
  -- the lease of the sync running now (one per connection at a time); renewed after every page,
  -- so a sync cut short by a crash frees the connection once the lease runs out
  sync_started_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, collection) references collections (tenant_id, name) on delete cascade on update cascade
);
-- The scheduler's scan: every connection that is not paused, across tenants.
create index connections_schedulable on connections (last_sync_at) where status <> 'paused';

create table connection_runs (
  tenant_id uuid not null,
  id uuid not null,
  connection_id uuid not null,
  status text not null check (status in ('success', 'error')),
  synced_count int not null default 0,
  error text,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, connection_id) references connections (tenant_id, id) on delete cascade
);
create index connection_runs_recent on connection_runs (tenant_id, connection_id, created_at desc);
-- The operator's per-provider view reads the last hours across tenants.
create index connection_runs_at on connection_runs (created_at);

-- Which memory holds which provider record: a record seen again updates its memory in place.
create table connection_records (
  tenant_id uuid not null,
  connection_id uuid not null,
  record_id text not null,
  memory_id uuid not null,
  primary key (tenant_id, connection_id, record_id),
  foreign key (tenant_id, connection_id) references connections (tenant_id, id) on delete cascade,
  foreign key (tenant_id, memory_id) references memories (tenant_id, id) on delete cascade
);
create index connection_records_memory on connection_records (tenant_id, memory_id);

-- Jobs of the embedded runner that must not wait twice in the queue (a connection's scheduled
-- sync); a job taken drops its key. graphile-worker has job_key for the same on PostgreSQL.
alter table jobs add column job_key text;
create unique index jobs_key on jobs (job_key) where job_key is not null;

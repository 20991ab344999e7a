-- Ingest batches: files dropped (or attached to mail) and turned into memories by the worker.
create table ingest_batches (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  collection text not null,
  -- The agent whose memories the files become; null for mail (no key sent it).
  agent_id uuid,
  agent_label text not null,
  source text not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id)
);

create table ingest_files (
  tenant_id uuid not null,
  batch_id uuid not null,
  key text not null,
  filename text not null,
  content_type text not null,
  size bigint not null,
  state text not null default 'queued' check (state in ('queued', 'processing', 'done', 'failed')),
  attempts int not null default 0,
  chunks int not null default 0,
  memory_ids jsonb not null default '[]'::jsonb,
  error text,
  updated_at timestamptz not null default now(),
  primary key (tenant_id, batch_id, key),
  foreign key (tenant_id, batch_id) references ingest_batches (tenant_id, id) on delete cascade
);

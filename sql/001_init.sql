-- Foundation schema. Every row of tenant data carries tenant_id, first in every key and index.
-- {{EMBEDDING_DIM}} is replaced by the embedder's dimension the first time a database is migrated.

create table tenants (
  id uuid primary key,
  name text not null,
  email text not null,
  tier text not null default 'free',
  -- per-tenant overrides of the tier's limits; the effective limits merge tier and overrides
  limits jsonb not null default '{}'::jsonb,
  is_admin boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index tenants_email on tenants (lower(email));

create table api_keys (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  key_hash text not null,
  prefix text not null,
  label text not null,
  read_only boolean not null default false,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  primary key (tenant_id, id)
);
create unique index api_keys_hash on api_keys (key_hash);

create table collections (
  tenant_id uuid not null references tenants (id) on delete cascade,
  name text not null,
  description text,
  metadata jsonb not null default '{}'::jsonb,
  -- bumped by every write to the collection's memories; caches key on it
  version bigint not null default 0,
  -- kept by every memory write so listing collections never counts rows
  memory_count bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, name)
);

create table memories (
  tenant_id uuid not null,
  id uuid not null,
  collection text not null,
  text text not null,
  importance double precision not null default 0.5,
  category text not null default 'other',
  source text not null default 'api',
  metadata jsonb not null default '{}'::jsonb,
  container_tag text,
  images jsonb not null default '[]'::jsonb,
  created_by_id uuid,
  created_by_label text,
  pinned boolean not null default false,
  archived boolean not null default false,
  superseded_by uuid,
  superseded_at timestamptz,
  expires_at timestamptz,
  expired_at timestamptz,
  embedding vector({{EMBEDDING_DIM}}) not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, collection) references collections (tenant_id, name)
    on delete cascade on update cascade
);
create index memories_listing on memories (tenant_id, collection, pinned desc, created_at desc);
create index memories_embedding on memories using hnsw (embedding vector_cosine_ops);

-- Recent results of the periodic self-check, for /v1/status (no tenant data).
create table status_checks (
  id bigserial primary key,
  checked_at timestamptz not null default now(),
  ok boolean not null,
  latency_ms real not null,
  detail text
);
create index status_checks_time on status_checks (checked_at desc);

-- Cookieless pageviews from /v1/pulse: path and referrer only, never an IP or a cookie.
create table pageviews (
  id bigserial primary key,
  at timestamptz not null default now(),
  path text not null,
  referrer text
);

-- The embedded (PGlite) job runner's queue; on PostgreSQL graphile-worker keeps its own.
create table jobs (
  id bigserial primary key,
  task text not null,
  payload jsonb not null,
  run_at timestamptz not null default now(),
  attempts int not null default 0,
  max_attempts int not null default 3,
  locked_at timestamptz,
  last_error text,
  created_at timestamptz not null default now()
);
create index jobs_due on jobs (run_at) where locked_at is null;

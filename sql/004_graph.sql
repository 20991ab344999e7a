-- Graph memory and hygiene: LLM usage and spend cap, tenant extraction configs, extraction
-- jobs, cached reports, and the indexes the expiry sweep and the contradictions report read.

-- One row per LLM call that got an answer: the usage report and the spend cap read it.
-- source: which endpoint served it ('tenant' = the tenant's own config, never capped;
-- 'server' = the operator's override; 'platform' = the platform default).
create table llm_usage (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  at timestamptz not null default now(),
  purpose text not null,
  source text not null,
  model text not null,
  prompt_tokens int not null,
  completion_tokens int not null,
  cost_usd double precision not null,
  latency_ms real not null,
  primary key (tenant_id, id)
);
create index llm_usage_time on llm_usage (tenant_id, at);

create table spend_caps (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  monthly_usd double precision not null,
  updated_at timestamptz not null default now()
);

-- A tenant's own OpenAI-compatible extraction endpoint; the key is sealed with the master key.
create table extraction_configs (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  provider text not null,
  base_url text not null,
  model text not null,
  api_key_sealed text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- What `GET /v1/memory/extract/job/{id}` shows. The queue (graphile-worker or the embedded
-- runner) only carries {tenant_id, job_id}; the state lives here.
create table extraction_jobs (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  collection text not null,
  memory_id uuid not null,
  agent_id uuid not null,
  state text not null default 'queued' check (state in ('queued', 'processing', 'done', 'failed')),
  attempts int not null default 0,
  facts jsonb not null default '[]'::jsonb,
  skipped text,
  error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);

-- Summary and profile answers, valid while the collection's version is unchanged.
create table report_cache (
  tenant_id uuid not null,
  collection text not null,
  kind text not null,
  cache_key text not null,
  version bigint not null,
  body jsonb not null,
  primary key (tenant_id, collection, kind),
  foreign key (tenant_id, collection) references collections (tenant_id, name) on delete cascade on update cascade
);

-- Small partial indexes: only facts still waiting to expire, only superseded rows.
create index memories_expiry on memories (tenant_id, expires_at) where expires_at is not null and expired_at is null;
create index memories_superseded on memories (tenant_id, collection, superseded_at desc) where superseded_by is not null;

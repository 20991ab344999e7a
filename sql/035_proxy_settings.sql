-- The chat proxy's tenant settings (docs/proxy.md, "Long threads"): the thread budget a request
-- gets when it names none. A tenant setting, kept on the platform beside the spend cap.
create table proxy_settings (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  max_thread_tokens int check (max_thread_tokens between 256 and 10000000),
  updated_at timestamptz not null default now()
);

-- A proxy turn that could not be stored (the embedder down at the end of a stream, after the
-- answer's headers were sent): kept where the tenant's other failed background work is counted
-- (pipeline health: src/services/status/pipeline.ts), a week, then dropped by the writes sweep.
create table proxy_store_failures (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  collection text not null,
  request_id text not null,
  error text not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index proxy_store_failures_by_collection on proxy_store_failures (tenant_id, collection);

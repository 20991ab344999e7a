-- The chat proxy's tenant settings (docs/proxy.md, "Long threads"): the thread budget a request
-- gets when it names none. A tenant setting, kept on the platform beside the spend cap.
create table proxy_settings (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  max_thread_tokens int check (max_thread_tokens between 256 and 10000000),
  updated_at timestamptz not null default now()
);

-- A tenant's own PostgreSQL for its data (services/tenant-db). Without a row its
-- data lives here. The connection string (password included) is sealed with the master key.
create table database_configs (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  connection_string_sealed text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

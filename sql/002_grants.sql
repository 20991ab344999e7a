-- Per-collection grants. A collection with no rows here is open to every key of its tenant.
create table collection_grants (
  tenant_id uuid not null,
  collection text not null,
  agent_key_id uuid not null,
  can_read boolean not null,
  can_write boolean not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, collection, agent_key_id),
  foreign key (tenant_id, collection) references collections (tenant_id, name) on delete cascade on update cascade,
  foreign key (tenant_id, agent_key_id) references api_keys (tenant_id, id) on delete cascade
);

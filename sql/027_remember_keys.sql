-- Remember's idempotency keys (docs/contract.md, "Retries and idempotency"): the same key with the
-- same body answers the job of the first request and stores nothing; the row commits with the raw
-- memory and its job, so a key is taken exactly when its remember was stored.
create table remember_keys (
  tenant_id uuid not null references tenants (id) on delete cascade,
  idempotency_key text not null,
  -- SHA-256 of the collection and the body: the same key with another body is refused.
  body_hash text not null,
  job_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, idempotency_key)
);

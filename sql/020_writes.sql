-- All-or-nothing writes (docs/contract.md, "Retries and idempotency").

-- An import and how far it got: each step of 100 memories commits with the row's new counts, so a
-- retry with the same idempotency key resumes after the last step committed and stores nothing twice.
create table imports (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  idempotency_key text,
  -- SHA-256 of the body: the same key with another body is refused.
  body_hash text not null,
  total int not null,
  -- Valid items handled, in the body's order: those before it are imported or skipped.
  processed int not null default 0,
  imported int not null default 0,
  skipped int not null default 0,
  collections jsonb not null default '[]'::jsonb,
  errors jsonb not null default '[]'::jsonb,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create unique index imports_idempotency_key on imports (tenant_id, idempotency_key) where idempotency_key is not null;

-- The keys presign issued: drop/complete accepts these only, each once (its batch then).
create table presigned_uploads (
  tenant_id uuid not null references tenants (id) on delete cascade,
  key text not null,
  collection text not null,
  batch_id uuid,
  created_at timestamptz not null default now(),
  primary key (tenant_id, key)
);

-- Files: a tenant's own bucket, and finding the files a deleted memory leaves behind.

-- A tenant's own S3 bucket for its files (docs/files.md); without a row its files go to the
-- platform's store. Both keys are sealed with the server master key and never returned.
create table storage_configs (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  backend text not null check (backend in ('s3')),
  endpoint_url text,
  bucket text not null,
  region text not null,
  access_key_sealed text not null,
  secret_key_sealed text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The chunks of one dropped file share its key in metadata.key, and the file is removed only
-- when the last of them goes: deleting a memory with a key asks whether another still has it.
create index memories_file_key on memories (tenant_id, (metadata->>'key')) where metadata ? 'key';

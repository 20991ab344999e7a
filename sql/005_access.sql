-- Access control, account and events: rate-limit windows, webhooks, reveal links, mail outbox,
-- audit log.

-- Fixed-window request counters, one row per bucket ("key:<api key id>", "ip:<address>",
-- "email:<sha256>"). Operational counters rather than tenant data: a bucket is hit once per
-- request with one upsert, and rows of past windows are swept hourly.
-- Unlogged: a commit that only touched this table waits for no WAL flush, which is most of
-- what a counter write would otherwise cost; after a crash the counters simply start over.
-- The low fillfactor keeps the constant updates HOT (in-page, no index churn).
create unlogged table rate_limits (
  bucket text primary key,
  window_start timestamptz not null,
  count int not null
) with (fillfactor = 50);

-- One outbound webhook per tenant; the signing secret is sealed with the server master key.
create table webhooks (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  url text not null,
  secret_sealed text not null,
  created_at timestamptz not null default now()
);

-- One-time links mailed by signup and recover-key. Only the token's hash is kept; the API key
-- is minted when the link is opened, so no key material waits in the database.
create table reveal_tokens (
  tenant_id uuid not null references tenants (id) on delete cascade,
  token_hash text not null,
  purpose text not null check (purpose in ('signup', 'recover')),
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (tenant_id, token_hash)
);
create unique index reveal_tokens_hash on reveal_tokens (token_hash);

-- Mail kept in the database when no SMTP server is configured (the embedded default).
create table mail_outbox (
  id uuid primary key,
  recipient text not null,
  subject text not null,
  body text not null,
  created_at timestamptz not null default now()
);

-- Append-only record of writes and access-control or account changes.
create table audit_log (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  at timestamptz not null default now(),
  actor_id uuid,
  actor_label text,
  action text not null,
  target text not null,
  detail jsonb not null default '{}'::jsonb,
  primary key (tenant_id, id)
);
create index audit_log_time on audit_log (tenant_id, at desc);

-- Rows are never changed, and only removed together with their tenant (account deletion).
create function audit_log_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id) then
    return old;
  end if;
  raise exception 'audit_log is append-only' using errcode = 'insufficient_privilege';
end $$;
create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_append_only();

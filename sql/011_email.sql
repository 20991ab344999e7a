-- Email drop (docs/contract.md, "Email drop"): each tenant's receiving address and its sender allowlist.

-- One address per tenant, created on first read. Rotation replaces the token in place, so the
-- old one stops resolving at once; the unique index is the inbound lookup.
create table email_addresses (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  token text not null,
  collection text not null default 'email',
  created_at timestamptz not null default now(),
  rotated_at timestamptz
);
create unique index email_addresses_token on email_addresses (token);

-- Allowed senders besides the account email: an address, or `@domain` for a whole domain;
-- stored lowercased.
create table email_senders (
  tenant_id uuid not null references tenants (id) on delete cascade,
  sender text not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, sender)
);

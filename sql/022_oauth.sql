-- orgmem as the OAuth 2.1 authorization server for its MCP endpoint (docs/mcp.md, "Remote MCP
-- with OAuth"). Platform tables: an approved client acts as an API key row of its tenant, so its
-- tokens resolve to that key in the one authentication (services/access/authenticate.ts).

-- The collections a key is limited to (an approved client's, chosen on the consent page), or null:
-- every collection its grants allow. Checked with the grants (services/access/grants.ts).
alter table api_keys add column collections text[];

-- Clients registered dynamically (RFC 7591). A client whose id is the URL of its metadata
-- document is read from that document and never stored.
create table oauth_clients (
  id text primary key,
  -- what the client registered, as answered to it (no secret)
  metadata jsonb not null,
  -- its client_secret (sealed with the master key), or null for a public client
  secret_sealed text,
  created_at timestamptz not null default now()
);

-- An authorization request: pending until the user decides on the consent page; once approved,
-- it holds the code's hash, the tenant and the key the client acts as, until the code is used.
create table oauth_requests (
  id text primary key,
  client_id text not null,
  redirect_uri text not null,
  code_challenge text not null,
  state text,
  scope text not null,
  resource text not null,
  expires_at timestamptz not null,
  code_hash text unique,
  tenant_id uuid references tenants (id) on delete cascade,
  key_id uuid,
  used_at timestamptz,
  created_at timestamptz not null default now()
);

-- Access and refresh tokens (hashed). `family` is the authorization request a token descends
-- from through every refresh: a refresh token used twice revokes the whole family.
create table oauth_tokens (
  token_hash text primary key,
  kind text not null check (kind in ('access', 'refresh')),
  family text not null,
  client_id text not null,
  tenant_id uuid not null references tenants (id) on delete cascade,
  key_id uuid not null,
  resource text not null,
  scope text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index oauth_tokens_family on oauth_tokens (family);
create index oauth_tokens_expiry on oauth_tokens (expires_at);
create index oauth_requests_expiry on oauth_requests (expires_at);

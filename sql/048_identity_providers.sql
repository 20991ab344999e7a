-- Sign-in with OpenID Connect (docs/sign-in.md): each tenant's identity provider, and the sign-ins
-- started and not yet come back.

-- One provider per tenant. The client secret is sealed with the server master key and never returned.
create table identity_providers (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  issuer text not null,
  client_id text not null,
  client_secret_sealed text,
  -- Who may be made a person at a first sign-in: an e-mail domain listed, or a group of the claim listed.
  allowed_domains text[] not null default '{}',
  allowed_groups text[] not null default '{}',
  groups_claim text not null default 'groups',
  default_role text not null default 'member' check (default_role in ('admin', 'member', 'viewer')),
  updated_at timestamptz(3) not null default now()
);
create index identity_providers_domains on identity_providers using gin (allowed_domains);

-- A sign-in sent to the provider: found by its state's hash when the browser comes back, used once.
create table oidc_signins (
  state_hash text primary key,
  tenant_id uuid not null references tenants (id) on delete cascade,
  nonce text not null,
  code_verifier text not null,
  return_to text not null,
  expires_at timestamptz(3) not null
);

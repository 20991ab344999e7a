-- People and teams (docs/people.md): the members of a tenant, signed in through the tenant's
-- OpenID Connect provider, the teams they are in, the scope of each collection, grants that name
-- people and teams, and the promotion of memories from a personal collection with review.

-- A person: provisioned at a first sign-in the tenant allows, or invited by e-mail. `removed`
-- people are kept (the audit log and the memories they wrote still name them) and act no more.
create table people (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  email text not null,
  name text not null default '',
  role text not null check (role in ('owner', 'admin', 'member', 'viewer')),
  state text not null default 'active' check (state in ('invited', 'active', 'suspended', 'removed')),
  -- The provider's `sub` once the person signed in: the identity, the e-mail only finds an invitee.
  subject text,
  created_at timestamptz(3) not null default now(),
  last_sign_in_at timestamptz(3),
  primary key (tenant_id, id)
);
create unique index people_email on people (tenant_id, lower(email));
create unique index people_subject on people (tenant_id, subject) where subject is not null;

-- A team, made in orgmem or mapped from the provider's group claim (`provider_group`).
create table teams (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  name text not null,
  provider_group text,
  created_at timestamptz(3) not null default now(),
  primary key (tenant_id, id)
);
create unique index teams_name on teams (tenant_id, lower(name));
create unique index teams_group on teams (tenant_id, provider_group) where provider_group is not null;

-- Who is in which team; `provider`: kept in sync with the group claim at each sign-in.
create table team_members (
  tenant_id uuid not null,
  team_id uuid not null,
  person_id uuid not null,
  role text not null default 'member' check (role in ('admin', 'member')),
  source text not null default 'orgmem' check (source in ('orgmem', 'provider')),
  created_at timestamptz(3) not null default now(),
  primary key (tenant_id, team_id, person_id),
  foreign key (tenant_id, team_id) references teams (tenant_id, id) on delete cascade,
  foreign key (tenant_id, person_id) references people (tenant_id, id) on delete cascade
);
create index team_members_person on team_members (tenant_id, person_id);

-- A key (or an approved OAuth client, a key row too) made by a signed-in person acts for them.
alter table api_keys add column person_id uuid;
alter table api_keys add foreign key (tenant_id, person_id) references people (tenant_id, id);

-- Who may read a collection besides its grants: everyone of the tenant (`org`), one person
-- (`personal`, `owner_person_id`) or the people of one or more teams (`team`, `teams`).
alter table collections add column scope text not null default 'org' check (scope in ('org', 'team', 'personal'));
alter table collections add column owner_person_id uuid;
alter table collections add column teams uuid[] not null default '{}';
alter table collections add constraint collections_scope_owner check ((scope = 'personal') = (owner_person_id is not null));

-- Grants naming a person or a team, beside collection_grants' keys: one grant list per collection.
create table collection_member_grants (
  tenant_id uuid not null,
  collection text not null,
  member_id uuid not null,
  member_kind text not null check (member_kind in ('person', 'team')),
  can_read boolean not null,
  can_write boolean not null,
  created_at timestamptz(3) not null default now(),
  primary key (tenant_id, collection, member_id),
  foreign key (tenant_id, collection) references collections (tenant_id, name) on delete cascade on update cascade
);

-- What a person's agent wrote for them: `created_by` is the agent, this the person.
alter table memories add column on_behalf_of_id uuid;
alter table memories add column on_behalf_of_label text;

-- A signed-in person's session (the dashboard, the OAuth consent page): its token is held in an
-- HTTP-only cookie and authenticates like a key (services/access/authenticate.ts); `csrf` must come
-- back in a header or a form field with every call the cookie authenticates.
create table person_sessions (
  token_hash text primary key,
  tenant_id uuid not null,
  person_id uuid not null,
  csrf text not null,
  created_at timestamptz(3) not null default now(),
  expires_at timestamptz(3) not null,
  revoked_at timestamptz(3),
  foreign key (tenant_id, person_id) references people (tenant_id, id) on delete cascade
);
create index person_sessions_person on person_sessions (tenant_id, person_id);

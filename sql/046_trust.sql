-- Trust (docs/trust.md): where each memory came from (its trust class, derived at write), a
-- quarantine for text that tries to instruct an agent, and the influence ledger of what was handed
-- to which agent.

-- The class is derived at write; rows written before it get the class their provenance shows
-- (docs/time.md, "Provenance"), and `agent` otherwise: what an API key wrote.
alter table memories add column trust text not null default 'agent';
update memories set trust = case
    when source = 'email' then 'mail'
    when source = 'import' then 'import'
    when metadata->>'connection_id' is not null then 'connector'
    else 'document' end
  where source in ('email', 'import') or metadata->>'connection_id' is not null or metadata->>'key' is not null;

-- `held`: never served (search, context, related, profile, proxies, hooks, MCP) while true; kept
-- apart from `quarantine` (state, reasons, decision) so that every read filters on one boolean.
alter table memories add column held boolean not null default false;
alter table memories add column quarantine jsonb;
create index memories_quarantine on memories (tenant_id, created_at desc) where quarantine is not null;

-- A key a person uses (the dashboard, their own scripts): what it writes is of class `user`.
alter table api_keys add column person boolean not null default false;

-- Per trust class: quarantine, flag or off; a tenant without a row has the default (every class
-- but `user` quarantined). A tenant setting, kept on the platform beside the proxy's.
create table trust_policies (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  policy jsonb not null,
  updated_at timestamptz(3) not null default now()
);

-- A memory's earlier texts, kept when an edit replaces one, so that the ledger shows what an
-- agent was handed: the text that held until `until`.
create table memory_revisions (
  tenant_id uuid not null,
  memory_id uuid not null,
  until timestamptz(3) not null,
  text text not null,
  primary key (tenant_id, memory_id, until),
  foreign key (tenant_id, memory_id) references memories (tenant_id, id) on delete cascade
);

-- The influence ledger: one row each time memories were handed to an agent. No foreign key to
-- the memories: an entry outlives a deleted memory, whose id it still names.
create table memory_ledger (
  tenant_id uuid not null,
  id uuid not null,
  at timestamptz(3) not null,
  agent_id uuid,
  agent_label text not null,
  via text not null,
  procedure text not null,
  request_id text not null,
  session_id text,
  memory_ids uuid[] not null,
  primary key (tenant_id, id)
);
create index memory_ledger_agent on memory_ledger (tenant_id, agent_id, at desc);
create index memory_ledger_session on memory_ledger (tenant_id, session_id, at desc) where session_id is not null;
create index memory_ledger_memories on memory_ledger using gin (memory_ids);
create index memory_ledger_at on memory_ledger (at);

-- Entries the process could not keep (its queue full, or its database refusing them a minute),
-- counted per tenant so that a gap in the ledger is seen, never silent.
create table memory_ledger_gaps (
  tenant_id uuid primary key,
  dropped bigint not null default 0,
  last_dropped_at timestamptz(3) not null
);

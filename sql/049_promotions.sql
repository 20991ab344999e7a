-- Promotion with review (docs/promotion.md): a person proposes memories of their personal
-- collection to a team or org collection; a reviewer of the target accepts (the memories are
-- copied there) or rejects with a reason; the proposer may withdraw while it waits. One row a
-- proposal, its memories as an array: they are decided together.
create table promotions (
  tenant_id uuid not null,
  id uuid not null,
  from_collection text not null,
  to_collection text not null,
  memory_ids uuid[] not null,
  note text,
  -- The person who proposed, and the agent (their key) that made the call; null when their session did.
  proposed_by_id uuid not null,
  proposed_by_label text not null,
  proposed_by_agent_id uuid,
  proposed_by_agent_label text,
  state text not null default 'proposed' check (state in ('proposed', 'accepted', 'rejected', 'withdrawn')),
  reason text,
  -- Who decided: the person (null for a key of no person) and the agent that made the call.
  decided_by_id uuid,
  decided_by_label text,
  decided_by_agent_id uuid,
  decided_by_agent_label text,
  decided_at timestamptz(3),
  -- The copies an acceptance made in the target, in the order of memory_ids.
  created_memory_ids uuid[] not null default '{}',
  created_at timestamptz(3) not null,
  primary key (tenant_id, id),
  foreign key (tenant_id, from_collection) references collections (tenant_id, name) on delete cascade on update cascade,
  foreign key (tenant_id, to_collection) references collections (tenant_id, name) on delete cascade on update cascade
);
create index promotions_to on promotions (tenant_id, to_collection, state, created_at desc);
create index promotions_proposer on promotions (tenant_id, proposed_by_id, created_at desc);

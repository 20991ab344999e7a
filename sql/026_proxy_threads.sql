-- The Responses proxy's threads (docs/proxy.md, "OpenAI Responses"): each response it relayed,
-- the thread the response belongs to (the id of the thread's first response) and the words of
-- the user it answered, so that a request continuing a thread with previous_response_id (which
-- sends only its new items) recalls from the thread's earlier turns too.
create table proxy_threads (
  tenant_id uuid not null references tenants (id) on delete cascade,
  response_id text not null,
  thread_id text not null,
  said text not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, response_id)
);
create index proxy_threads_thread on proxy_threads (tenant_id, thread_id, created_at);

-- A tenant's webhook events wait in an outbox and one flush job per tenant delivers them, oldest
-- first (docs/webhooks.md, "Delivery"): the job queue holds one job per webhook, not one per
-- event, and a receiver that keeps failing is backed off, then suspended. A dead letter is an
-- event given up on, kept for the tenant to see and replay.
create table webhook_events (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null,
  type text not null,
  -- the event exactly as it is signed and sent, the same on every try
  body text not null,
  state text not null default 'pending' check (state in ('pending', 'dead')),
  attempts int not null default 0,
  last_error text,
  created_at timestamptz not null default now(),
  dead_at timestamptz,
  primary key (tenant_id, id)
);
create index webhook_events_pending on webhook_events (tenant_id, created_at, id) where state = 'pending';
create index webhook_events_dead on webhook_events (tenant_id, dead_at) where state = 'dead';

-- The circuit breaker: failed tries in a row, the time of the next try while backing off, the
-- suspension and its reason, and the lease of the flush delivering now.
alter table webhooks add column failures int not null default 0;
alter table webhooks add column next_try_at timestamptz;
alter table webhooks add column suspended_at timestamptz;
alter table webhooks add column suspended_reason text;
alter table webhooks add column flushing_until timestamptz;

-- Events still queued as jobs of one delivery each (the queue before this migration) move to the
-- outbox, for tenants that still have their webhook; the jobs go, tried or not, with the failed
-- ones the queue kept. In blocks that run only where such jobs are: a new database (and a Citus
-- cluster's, whose webhooks table is distributed) never plans them.
do $$
begin
  if exists (select 1 from jobs where task = 'webhook_deliver') then
    insert into webhook_events (tenant_id, id, type, body, created_at)
    select (j.payload->>'tenant_id')::uuid, (j.payload->'event'->>'id')::uuid, j.payload->'event'->>'type', (j.payload->'event')::text, j.created_at
      from jobs j
     where j.task = 'webhook_deliver' and j.run_at < 'infinity'
       and (j.payload->>'tenant_id')::uuid in (select tenant_id from webhooks)
    on conflict do nothing;
    insert into jobs (task, payload, job_key, flags)
    select 'webhook_flush', jsonb_build_object('tenant_id', tenant_id), 'webhook_flush:' || tenant_id,
           array['tenant:' || tenant_id, 'lane:webhook', 'tenant-lane:' || tenant_id || ':webhook']
      from (select distinct tenant_id from webhook_events) p;
    delete from jobs where task = 'webhook_deliver';
  end if;
  if to_regclass('graphile_worker._private_jobs') is null then
    return;
  end if;
  if exists (select 1 from graphile_worker._private_tasks where identifier = 'webhook_deliver') then
    insert into webhook_events (tenant_id, id, type, body, created_at)
    select (j.payload->>'tenant_id')::uuid, (j.payload->'event'->>'id')::uuid, j.payload->'event'->>'type', (j.payload->'event')::text, j.created_at
      from graphile_worker._private_jobs j
     where j.task_id = (select id from graphile_worker._private_tasks where identifier = 'webhook_deliver')
       and j.attempts < j.max_attempts
       and (j.payload->>'tenant_id')::uuid in (select tenant_id from webhooks)
    on conflict do nothing;
    perform graphile_worker.add_job('webhook_flush', json_build_object('tenant_id', tenant_id), job_key => 'webhook_flush:' || tenant_id,
                                    flags => array['tenant:' || tenant_id, 'lane:webhook', 'tenant-lane:' || tenant_id || ':webhook'])
       from (select distinct tenant_id from webhook_events) p;
    delete from graphile_worker._private_jobs where task_id = (select id from graphile_worker._private_tasks where identifier = 'webhook_deliver');
  end if;
end $$;

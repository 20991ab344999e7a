-- The embedded job runner shares its workers as graphile-worker's does (src/ports/jobs/shares.ts):
-- each job carries the flags of its share, and its priority is its tenant's backlog when it was
-- queued; a take skips the flags at their cap and takes the lowest priority first.
alter table jobs add column flags text[] not null default '{}';
alter table jobs add column priority int not null default 0;
drop index jobs_due;
create index jobs_due on jobs (priority, run_at, id) where locked_at is null;
create index jobs_waiting_by_tenant on jobs ((payload->>'tenant_id')) where locked_at is null;

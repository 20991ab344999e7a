-- Crash recovery for graphile-worker (src/ports/jobs/graphile.ts). A job keeps the id of the
-- worker that took it in `locked_by`, and graphile-worker itself frees a silent worker's jobs only
-- after four hours. Each running worker writes its beat here; a job whose worker has stopped
-- beating belongs to a dead process and is unlocked within a minute.
create table worker_heartbeats (
  worker_id text primary key,
  seen_at timestamptz not null default now()
);

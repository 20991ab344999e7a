-- The minute self-check's components (src/services/status/checks.ts): the database round trip
-- (`latency_ms`, its error in `detail`, as before), the job queue's lag and the file store's
-- probe. `ok` now means the whole check passed (status 'operational'); `status` is 'degraded'
-- when the database answered but the queue or the file store failed, 'down' when the database
-- failed. Component columns are null on checks recorded before this migration.
alter table status_checks
  add column status text not null default 'operational' check (status in ('operational', 'degraded', 'down')),
  add column database_ok boolean,
  add column queue_ok boolean,
  add column queue_lag_ms real,
  add column queue_latency_ms real,
  add column queue_error text,
  add column blobs_ok boolean,
  add column blobs_latency_ms real,
  add column blobs_error text;
-- Until now a check was the database round trip alone.
update status_checks set database_ok = ok, status = case when ok then 'operational' else 'down' end;
alter table status_checks alter column database_ok set not null;

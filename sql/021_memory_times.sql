-- When and where from (docs/time.md): every memory carries when its source says it happened
-- (observed_at) and when it holds (valid_from, valid_to), besides the system times it had
-- (created_at, superseded_at). Expiry is the case of a valid_to in the future: the column is
-- renamed, and the hourly sweep and search read it as before.
alter table memories rename column expires_at to valid_to;
alter index memories_expiry rename to memories_valid_to;
alter table memories add column observed_at timestamptz, add column valid_from timestamptz,
  -- An explicit retraction: {how: ended|wrong, at, reason, retracted_at, valid_to_before} (the last to undo it).
  add column retraction jsonb;
-- Existing rows: observed and valid from when they were recorded; a superseded fact held until
-- it was superseded, which is when supersession closed it then.
update memories set observed_at = created_at, valid_from = created_at,
  valid_to = case when superseded_at is not null then least(coalesce(valid_to, superseded_at), superseded_at) else valid_to end;
alter table memories alter column observed_at set not null, alter column observed_at set default now(),
  alter column valid_from set not null, alter column valid_from set default now();
-- observed_after / observed_before filters read this.
create index memories_observed on memories (tenant_id, collection, observed_at);

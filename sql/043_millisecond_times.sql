-- A memory's times are stored at the precision the API answers them: milliseconds (docs/time.md,
-- "Three times"). now() has microseconds, the API's ISO times milliseconds, so a memory answered
-- as created at .123 was stored valid from .123456, and `as_of` at the moment the API reported
-- missed it. A time(3) column holds exactly what the API answers; a value with more digits is
-- rounded to the millisecond on its way in (PostgreSQL's rule for a precision), and the API reads
-- that value back, so what it answers and what as_of and the observed_at filters compare are the
-- same instant.
--
-- Existing values are truncated, not rounded: the API has answered them truncated (a JavaScript
-- Date keeps milliseconds), so every time a client already holds stays the same instant.
--
-- The generated text search document reads observed_at, and a column a generated column reads
-- cannot change type: it is dropped and added again in the same statement, and its index made
-- again. The statement rewrites the memories table and rebuilds every index on it, the vector
-- graph's included: at a million memories it takes minutes, during which the migration holds the
-- table. On Citus the statement is sent to every shard of the distributed table.
alter table memories
  drop column tsv,
  alter column created_at type timestamptz(3) using date_trunc('milliseconds', created_at),
  alter column updated_at type timestamptz(3) using date_trunc('milliseconds', updated_at),
  alter column observed_at type timestamptz(3) using date_trunc('milliseconds', observed_at),
  alter column valid_from type timestamptz(3) using date_trunc('milliseconds', valid_from),
  alter column valid_to type timestamptz(3) using date_trunc('milliseconds', valid_to),
  alter column superseded_at type timestamptz(3) using date_trunc('milliseconds', superseded_at),
  alter column expired_at type timestamptz(3) using date_trunc('milliseconds', expired_at),
  add column tsv tsvector
    generated always as (to_tsvector('english', text) || to_tsvector('english', observed_words(observed_at))) stored;
create index memories_tsv on memories using gin (tsv);

-- A collection's updated_at moves with its memories' writes, in the same statement (sql/042): at
-- the same precision it is the same instant as the memory's created_at the API answers.
alter table collections alter column updated_at type timestamptz(3) using date_trunc('milliseconds', updated_at);

-- The text search document holds the day a memory happened as words (docs/time.md, "Search"):
-- its observed_at date in UTC as day, month and year ("8 May 2023"), so a query that names a day
-- finds what happened then, and, through the text side's feedback round (docs/search.md), a
-- memory's best matches bring in others of the same day. Before event time had its own column,
-- a client wrote the date into the text for exactly this; moving it to observed_at must not lose it.
--
-- A generated column's expression cannot be changed in place: the column is dropped and added
-- again, which rewrites the table and rebuilds its GIN index (minutes at a million memories).

-- to_char is stable only because of its localised patterns (TM); 'FMDD FMMonth YYYY' of a time
-- without zone reads no setting, so this is immutable, as a generated column requires.
create function observed_words(at timestamptz) returns text language sql immutable parallel safe as $fn$
  select to_char(at at time zone 'UTC', 'FMDD FMMonth YYYY')
$fn$;

alter table memories drop column tsv;
alter table memories add column tsv tsvector
  generated always as (to_tsvector('english', text) || to_tsvector('english', observed_words(observed_at))) stored;
create index memories_tsv on memories using gin (tsv);

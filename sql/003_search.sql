-- Search: the full-text side (a generated tsvector with a GIN index), the indexes that let filtered
-- searches find their rows without walking the whole collection.
--
-- Text search configuration: 'english'. Search queries are natural language and are matched as an
-- OR of their words (ranked), so stop words must go or "what did she say about the" would match
-- every memory; 'simple' keeps them. Stemming also lets "meetings" find "meeting". The bundled
-- embedder is English-only, so English is the corpus this service is tuned for; text in other
-- languages is still indexed word by word (lower-cased, rarely stemmed) and found by exact words.
alter table memories add column tsv tsvector generated always as (to_tsvector('english', text)) stored;

-- GIN serves the match; search ranks at most a capped number of matches (ORGMEM_SEARCH_TEXT_CAP)
-- because ranking every match of a common word is what makes text search slow at scale. A rum
-- index (postgresql-15-rum) was measured as the alternative and rejected: its rank-ordered scan
-- still visits every match (docs/search.md), and it is missing on PGlite and managed PostgreSQL.
create index memories_tsv on memories using gin (tsv);

-- Selective filters (a container tag, a rare category) are served from these, so a filtered
-- search that the approximate vector index cannot satisfy falls back to an exact scan of only the
-- matching rows.
create index memories_category on memories (tenant_id, collection, category);
create index memories_container_tag on memories (tenant_id, collection, container_tag);
create index memories_metadata on memories using gin (metadata jsonb_path_ops);

-- A natural-language query's lexemes in the index's configuration (at most 64), and an OR of
-- lexemes as tsquery text. Lexemes are quoted for tsquery input, so punctuation inside them (URLs,
-- e-mail addresses) is kept.
create function search_lexemes(q text) returns text[] language sql immutable parallel safe as $fn$
  select coalesce(array_agg(l), '{}') from (select l from unnest(tsvector_to_array(to_tsvector('english', q))) l limit 64) lexemes
$fn$;
create function search_tsquery(lexemes text[]) returns text language sql immutable parallel safe as $fn$
  select coalesce(string_agg('''' || replace(replace(l, '\', '\\'), '''', '''''') || '''', ' | '), '') from unnest(lexemes) l
$fn$;

-- Search: the full-text side (a generated tsvector with a ranked index) and the indexes that let
-- filtered searches find their rows without walking the whole collection.
--
-- Text search configuration: 'english'. Search queries are natural language and are matched as an
-- OR of their words (ranked), so stop words must go or "what did she say about the" would match
-- every memory; 'simple' keeps them. Stemming also lets "meetings" find "meeting". The bundled
-- embedder is English-only, so English is the corpus this service is tuned for; text in other
-- languages is still indexed word by word (lower-cased, rarely stemmed) and found by exact words.
alter table memories add column tsv tsvector generated always as (to_tsvector('english', text)) stored;

-- Ranking every match is what makes text search slow on common words at scale. The rum index
-- (postgresql-15-rum) stores positions and answers "top k by rank" from the index itself; where rum
-- is not installed or may not be created (PGlite, managed PostgreSQL) a GIN index serves the
-- match and the ranking is computed on the matching rows. Search reads which one exists.
do $$
begin
  if exists (select 1 from pg_available_extensions where name = 'rum') then
    begin
      create extension if not exists rum;
    exception when others then
      raise notice 'rum is installed but could not be created (%); using GIN for full-text search', sqlerrm;
    end;
  end if;
  if exists (select 1 from pg_extension where extname = 'rum') then
    execute 'create index memories_tsv on memories using rum (tsv rum_tsvector_ops)';
  else
    execute 'create index memories_tsv on memories using gin (tsv)';
  end if;
end $$;

-- Selective filters (a container tag, a rare category) are served from these, so a filtered
-- search that the approximate vector index cannot satisfy falls back to an exact scan of only the
-- matching rows.
create index memories_category on memories (tenant_id, collection, category);
create index memories_container_tag on memories (tenant_id, collection, container_tag);
create index memories_metadata on memories using gin (metadata jsonb_path_ops);

-- A natural-language query as an OR of its lexemes (at most 64), in the index's configuration.
-- Lexemes are quoted for tsquery input, so punctuation inside them (URLs, e-mail addresses) is kept.
create function search_tsquery(q text) returns text language sql immutable parallel safe as $fn$
  select coalesce(string_agg('''' || replace(replace(l, '\', '\\'), '''', '''''') || '''', ' | '), '')
    from (select l from unnest(tsvector_to_array(to_tsvector('english', q))) l limit 64) lexemes
$fn$;

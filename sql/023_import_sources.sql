-- Imports from other stores (docs/import.md): a record already imported is counted, not stored
-- again, found by the key its memory keeps in metadata.import_source ("<format>:<its id there>").
alter table imports add column already_imported int not null default 0;
create index memories_import_source on memories (tenant_id, (metadata->>'import_source')) where metadata ? 'import_source';

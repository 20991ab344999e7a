-- Pipeline health (src/services/status/pipeline.ts). Work that is not done is a small part of
-- each table; partial indexes keep its counts cheap however many jobs have finished: per tenant
-- and collection for the health and stats answers, by age for the public probe's
-- "is the queue draining" question across all tenants.
create index extraction_jobs_unfinished on extraction_jobs (tenant_id, collection) where state <> 'done';
create index extraction_jobs_pending_age on extraction_jobs (updated_at) where state in ('queued', 'processing');
create index ingest_files_unfinished on ingest_files (tenant_id, batch_id) where state <> 'done';
create index ingest_files_pending_age on ingest_files (updated_at) where state in ('queued', 'processing');

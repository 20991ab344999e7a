import type { App } from '../../core/context.ts';

/**
 * Minutes without progress after which queued or processing work counts as stuck: far beyond a
 * job's longest run plus its backoffs, so only a queue that is not draining gets there.
 */
const STUCK_MINUTES = 15;

/**
 * Failed and stuck extraction jobs and ingested files of a tenant, of one collection when given,
 * the chat proxy's turns that could not be stored (the last week's), and a failed fill of the
 * vector graph (the account's, whichever collection).
 * Only unfinished rows are read (the partial indexes of sql/013).
 */
export async function pipelineJobs(app: App, tenantId: string, collection: string | null = null) {
  const [row] = await app.db.query<{
    failed_extractions: number;
    stuck_extractions: number;
    failed_files: number;
    stuck_files: number;
    failed_proxy_stores: number;
    failed_graph_fills: number;
  }>(
    `with jobs as (
       select state, updated_at from extraction_jobs
        where tenant_id = $1 and state <> 'done' and ($2::text is null or collection = $2)
     ), files as (
       select f.state, f.updated_at from ingest_files f join ingest_batches b on b.tenant_id = f.tenant_id and b.id = f.batch_id
        where f.tenant_id = $1 and f.state <> 'done' and ($2::text is null or b.collection = $2)
     )
     select (select count(*) from jobs where state = 'failed')::int as failed_extractions,
            (select count(*) from jobs where state <> 'failed' and updated_at < now() - make_interval(mins => $3::int))::int as stuck_extractions,
            (select count(*) from files where state = 'failed')::int as failed_files,
            (select count(*) from files where state <> 'failed' and updated_at < now() - make_interval(mins => $3::int))::int as stuck_files,
            (select count(*) from proxy_store_failures where tenant_id = $1 and ($2::text is null or collection = $2))::int as failed_proxy_stores,
            (select count(*) from graph_tenants where tenant_id = $1 and error is not null)::int as failed_graph_fills`,
    [tenantId, collection, STUCK_MINUTES],
  );
  return row!;
}

/** Whether any tenant's work has waited or run without progress past the stuck limit: the queue is not draining. */
export async function queueStalled(app: App): Promise<boolean> {
  const [row] = await app.platform.query<{ stalled: boolean }>(
    `select exists (select 1 from extraction_jobs where state in ('queued', 'processing') and updated_at < now() - make_interval(mins => $1::int))
         or exists (select 1 from ingest_files where state in ('queued', 'processing') and updated_at < now() - make_interval(mins => $1::int)) as stalled`,
    [STUCK_MINUTES],
  );
  return row!.stalled;
}

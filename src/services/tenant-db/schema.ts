import type { Db } from '../../ports/db/db.ts';
import type { VectorIndex } from '../../ports/db/vector-storage.ts';
import { migrate } from '../../maintenance/migrate.ts';

/**
 * The tables whose rows a tenant's own database holds; every other table (tenants, keys,
 * configs, audit, usage, webhooks, the job queue...) stays on the platform's. A new table of
 * tenant data is added here.
 */
export const DATA_TABLES = [
  'collections',
  'memories',
  'collection_grants',
  'collection_member_grants',
  'report_cache',
  'extraction_jobs',
  'remember_keys',
  'ingest_batches',
  'ingest_files',
  'presigned_uploads',
  'imports',
  'import_records',
  'connections',
  'connection_runs',
  'connection_records',
  'proxy_threads',
  'proxy_store_failures',
  'graph_tenants',
  'memory_use',
  'changesets',
  'changeset_changes',
  'consolidation_settings',
  'memory_revisions',
  'memory_ledger',
  'memory_ledger_gaps',
  'promotions',
] as const;

/** The database cannot hold a tenant's data; the message says why. */
export class UnusableDatabaseError extends Error {}

/**
 * Brings a tenant's database to this version's schema: the same migrations as the platform's
 * (so its tables are the same, and the control tables exist there unused), then the foreign keys
 * from data tables to control tables are dropped, since those rows live on the platform.
 * Idempotent, and cheap once current.
 */
export async function migrateTenantDb(db: Db, embeddingDim: number, vectorIndex: VectorIndex): Promise<void> {
  const [vector] = await db.query<{ installed: boolean; superuser: boolean }>(
    `select installed_version is not null as installed, (select rolsuper from pg_roles where rolname = current_user) as superuser
       from pg_available_extensions where name = 'vector'`,
  );
  if (!vector) throw new UnusableDatabaseError('the pgvector extension is not available on this server (install pgvector 0.8 there)');
  // pgvector is not a trusted extension: only a superuser can create it.
  if (!vector.installed && !vector.superuser) {
    throw new UnusableDatabaseError(
      'pgvector is not installed in this database and this role cannot install it: run `create extension vector` there as a superuser first',
    );
  }
  // A platform database (this service's own, or another orgmem's) has tenants; a tenant's own
  // never does. Checked before anything is changed: its foreign keys must stay.
  const [tenants] = await db.query<{ t: string | null }>(`select to_regclass('tenants')::text as t`);
  if (tenants?.t && (await db.query('select 1 from tenants limit 1')).length) {
    throw new UnusableDatabaseError("this is an orgmem platform database, not one for a tenant's data");
  }
  await migrate(db, embeddingDim, vectorIndex);
  const foreign = await db.query<{ stmt: string }>(
    `select format('alter table %I drop constraint %I', c.conrelid::regclass::text, c.conname) as stmt
       from pg_constraint c
      where c.contype = 'f' and c.connamespace = current_schema()::regnamespace
        and c.conrelid::regclass::text = any($1) and not (c.confrelid::regclass::text = any($1))`,
    [DATA_TABLES],
  );
  for (const fk of foreign) await db.exec(fk.stmt);
}

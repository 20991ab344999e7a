import type { Queryable } from '../ports/db/db.ts';

/**
 * Where each table of the schema lives on a Citus cluster (docs/citus.md). One list: the
 * distribution step below reads it, and test/citus-schema.test.ts checks that every table of the
 * schema is in it and placed as it says.
 *
 * - `distributed`: owned by a tenant, sharded on tenant_id, all co-located with `collections`, so
 *   a statement that names the tenant runs on one shard of one node, joins included.
 * - `reference`: small tables read by authentication or found by a global key (an API key's
 *   hash, an OAuth token, a reveal token, the email drop's token, a Stripe customer), copied to
 *   every node: such a lookup is one row read on the node that runs it.
 * - `local`: state of the coordinator alone (the job queue, rate-limit counters, migrations...).
 */
export type Placement = { kind: 'distributed' } | { kind: 'reference'; reason: string } | { kind: 'local'; reason: string };

const distributed: Placement = { kind: 'distributed' };
const reference = (reason: string): Placement => ({ kind: 'reference', reason });
const local = (reason: string): Placement => ({ kind: 'local', reason });

/** Keyed by table; reference tables first, then distributed tables in foreign-key order. */
export const CITUS_TABLES: Record<string, Placement> = {
  tenants: reference('every request reads its tenant; every tenant-owned table refers to it'),
  api_keys: reference('authentication finds a key by its hash, whatever the tenant'),
  database_configs: reference('authentication reads where the tenant keeps its data'),
  oauth_clients: reference('a client is global; consent and token exchange read it'),
  oauth_requests: reference('the token exchange finds a request by its code hash'),
  oauth_tokens: reference('authentication finds an access token by its hash'),
  reveal_tokens: reference('a reveal link is found by its token hash'),
  email_addresses: reference('an inbound email is routed by the token of its address'),
  billing_accounts: reference("Stripe's webhooks find an account by its customer id"),
  people: reference('authentication reads the person a key or a session acts for'),
  teams: reference("authentication reads a person's teams, which grants and scopes match"),
  team_members: reference("authentication reads a person's teams, which grants and scopes match"),
  person_sessions: reference("authentication finds a person's session by its token hash"),
  identity_providers: reference("a sign-in started by e-mail finds its tenant by the address's domain"),
  oidc_signins: reference("the provider's answer finds its sign-in by the state's hash"),

  collections: distributed,
  memories: distributed,
  collection_grants: distributed,
  report_cache: distributed,
  llm_usage: distributed,
  spend_caps: distributed,
  extraction_configs: distributed,
  extraction_jobs: distributed,
  webhooks: distributed,
  webhook_events: distributed,
  audit_log: distributed,
  storage_configs: distributed,
  ingest_batches: distributed,
  ingest_files: distributed,
  email_senders: distributed,
  connections: distributed,
  connection_runs: distributed,
  connection_records: distributed,
  imports: distributed,
  import_records: distributed,
  presigned_uploads: distributed,
  proxy_threads: distributed,
  proxy_settings: distributed,
  proxy_store_failures: distributed,
  remember_keys: distributed,
  graph_tenants: distributed,
  memory_use: distributed,
  changesets: distributed,
  changeset_changes: distributed,
  consolidation_settings: distributed,
  trust_policies: distributed,
  memory_revisions: distributed,
  memory_ledger: distributed,
  memory_ledger_gaps: distributed,
  collection_member_grants: distributed,
  promotions: distributed,

  schema_migrations: local('the migrations applied: read and written by orgmem migrate on the coordinator'),
  settings: local('instance settings (the embedding dimension), read at start-up'),
  jobs: local('the job records of the coordinator-side queue'),
  rate_limits: local('per-key counters hit by every request: one local upsert, no node involved'),
  mail_outbox: local('outgoing mail, sent by the worker processes'),
  status_checks: local("the status page's probes of the service itself"),
  pageviews: local('page views of the public pages, not owned by a tenant'),
  stripe_events: local("Stripe's event ids, to handle each once"),
  worker_heartbeats: local('liveness of the worker processes'),
};

/** Schemas whose tables all stay on the coordinator, with the reason. */
export const CITUS_LOCAL_SCHEMAS: Record<string, string> = {
  graphile_worker: "graphile-worker's queue: its functions and locks run on the coordinator",
};

export class CitusSetupError extends Error {}

/** Whether the database is a Citus coordinator (the extension is installed in it). */
export async function isCitus(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ on: boolean }>(`select exists (select 1 from pg_extension where extname = 'citus') as on`);
  return row!.on;
}

/** The tables of the public schema that the list above does not place. */
export async function unplacedTables(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`,
  );
  return rows.map((r) => r.name).filter((name) => !CITUS_TABLES[name]);
}

/** The tables Citus knows, with their kind: 'distributed', 'reference' or 'local'. */
export async function placements(db: Queryable): Promise<Map<string, string>> {
  const rows = await db.query<{ name: string; kind: string }>(`select table_name::text as name, citus_table_type as kind from citus_tables`);
  return new Map(rows.map((r) => [r.name, r.kind]));
}

/**
 * On a Citus coordinator, places every table as CITUS_TABLES says; tables already placed are
 * left alone, so it runs on every start. It runs in the migrations' transaction, after them
 * (Citus copies the rows into the shards), reference tables first: a distributed table's foreign
 * keys need their targets placed. Throws, naming what is missing, when the coordinator or the
 * workers are not in the cluster's metadata or a table is not listed.
 */
export async function distribute(tx: Queryable): Promise<void> {
  const unplaced = await unplacedTables(tx);
  if (unplaced.length) {
    throw new CitusSetupError(`Citus: no placement for table(s) ${unplaced.join(', ')}; list them in src/maintenance/citus.ts.`);
  }
  const [nodes] = await tx.query<{ workers: number; coordinator: number }>(
    `select count(*) filter (where groupid <> 0)::int as workers, count(*) filter (where groupid = 0)::int as coordinator
       from pg_dist_node where isactive and noderole = 'primary'`,
  );
  if (!nodes!.coordinator) {
    throw new CitusSetupError(
      "Citus: the coordinator is not in this database's cluster metadata; run SELECT citus_set_coordinator_host('<host>', <port>) in it (docs/citus.md).",
    );
  }
  if (!nodes!.workers) {
    throw new CitusSetupError("Citus: this database has no worker node; add each with SELECT citus_add_node('<host>', <port>) in it (docs/citus.md).");
  }
  const placed = await placements(tx);
  // A 'local' one is a Citus local table: Citus makes one of a local table that gains a foreign
  // key to a reference table; it is placed like a plain one.
  const todo = Object.entries(CITUS_TABLES).filter(([table, p]) => p.kind !== 'local' && [undefined, 'local'].includes(placed.get(table)));
  if (!todo.length) return;
  // Citus distributes no table that a table not yet distributed refers to: the foreign keys
  // between tenant-owned tables are dropped, the tables placed, and the keys made again.
  const tenantOwned = Object.keys(CITUS_TABLES).filter((t) => CITUS_TABLES[t]!.kind === 'distributed');
  const keys = await tx.query<{ tbl: string; name: string; def: string }>(
    `select conrelid::regclass::text as tbl, conname as name, pg_get_constraintdef(oid) as def from pg_constraint
      where contype = 'f' and confrelid::regclass::text = any($1::text[]) and conrelid::regclass::text = any($1::text[])`,
    [tenantOwned],
  );
  for (const k of keys) await tx.exec(`alter table ${k.tbl} drop constraint "${k.name}"`);
  // audit_log's append-only trigger reads tenants, a reference table, present on every node.
  await tx.exec(`set local citus.enable_unsafe_triggers = on`);
  for (const [table, placement] of todo) {
    if (placement.kind === 'reference') await tx.query(`select create_reference_table($1)`, [table]);
    else await tx.query(`select create_distributed_table($1, 'tenant_id', colocate_with => $2)`, [table, table === 'collections' ? 'none' : 'collections']);
  }
  // Citus cascades no update of a key that holds the distribution column; a collection's name is
  // never changed (its rows are only ever deleted), so the keys come back without ON UPDATE CASCADE.
  for (const k of keys) await tx.exec(`alter table ${k.tbl} add constraint "${k.name}" ${k.def.replace(' ON UPDATE CASCADE', '')}`);
}

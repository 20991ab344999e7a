import type { Logger } from 'pino';
import type { Config, VectorStorage } from './config.ts';
import type { BlobStore } from '../ports/blobs/blobs.ts';
import type { Db } from '../ports/db/db.ts';
import type { Embedder } from '../ports/embedder/embedder.ts';
import type { JobQueue } from '../ports/jobs/jobs.ts';
import type { Mailer } from '../ports/mailer.ts';
import type { Metrics } from '../ports/metrics.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { KeyRole, Tenant } from '../schemas/access.ts';
import type { PersonRole } from '../schemas/people.ts';
import type { FrontEnd } from '../schemas/trust.ts';

/** The long-lived parts of a running service, shared by every request and job. */
export interface App {
  config: Config;
  /**
   * Where the tenant's data lives (collections, memories, their caches, grants, jobs' state,
   * files' and connections' records): the platform database, or for a tenant with its own
   * database (services/tenant-db) that one. An authenticated context's `app` is already the
   * tenant's.
   */
  db: Db;
  /** Control data (tenants, keys, configs, audit, usage, webhooks, the job queue): always the platform database. */
  platform: Db;
  embedder: Embedder;
  jobs: JobQueue<App>;
  secrets: Secrets;
  mailer: Mailer;
  /** The platform's file store (a directory or a bucket); a tenant's own bucket comes from services/storage. */
  blobs: BlobStore;
  log: Logger;
  /** This App's request and stage timings (the operator's metrics endpoints). */
  metrics: Metrics;
  /**
   * The storage the platform database holds, read at start (the column's type without a valid
   * vector index): searches walk its graph and new rows are cast to its column, whatever is
   * configured, since a database keeps its storage until `orgmem vector-storage` converts it and
   * a search ordered for another graph would read every row. The cast is explicit because a Citus
   * coordinator fails an INSERT ... SELECT that needs the implicit vector-halfvec one
   * (docs/vectors.md). A process started before a conversion is restarted.
   */
  vectorStorage: VectorStorage;
}

/** The API key a request authenticated with: each key is an agent identity. */
export interface Agent {
  id: string;
  label: string;
  role: KeyRole;
  read_only: boolean;
  /** A key a person uses: its writes are of trust class `user` (docs/trust.md); absent: an agent's. */
  person?: boolean;
  /** The collections this key is limited to besides its grants (an OAuth client's, docs/mcp.md); absent or null: no such limit. */
  collections?: string[] | null;
  /**
   * The person the call acts for (docs/people.md): a signed-in person's session (whose `id` is the
   * person's), or a key that person made. Absent: a key of no person, as before people existed.
   */
  for?: ActingPerson | null;
}

/** A person a call acts for, with what the scopes and grants match: the person's id and their teams' ids. */
export interface ActingPerson {
  id: string;
  label: string;
  role: PersonRole;
  teams: string[];
}

export interface PublicCtx {
  app: App;
  requestId: string;
  ip?: string;
  /** Where the caller reached this server (`http://host:port`): the base of URLs handed back to it. */
  origin?: string;
}

/** The request a context serves, for the influence ledger (docs/trust.md); absent in jobs and other calls without one. */
export interface Call {
  via: FrontEnd;
  procedure: string;
  session: string | null;
}

export interface AuthedCtx extends PublicCtx {
  tenant: Tenant;
  agent: Agent;
  call?: Call;
}

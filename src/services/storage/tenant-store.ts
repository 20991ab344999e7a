import { LRUCache } from 'lru-cache';
import type { App } from '../../core/context.ts';
import type { BlobStore } from '../../ports/blobs/blobs.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { s3BlobStore } from '../../ports/blobs/s3.ts';
import { targetRule } from '../../ports/public-target.ts';

export interface StorageConfigRow {
  backend: 's3';
  endpoint_url: string | null;
  bucket: string;
  region: string;
  access_key_sealed: string;
  secret_key_sealed: string;
  created_at: Date;
  updated_at: Date;
}

/** A tenant's bucket with its keys in the clear. */
export interface TenantBucket {
  endpoint_url: string | null;
  bucket: string;
  region: string;
  access_key: string;
  secret_key: string;
}

// A tenant's endpoint that hangs must not hold a request or a job for ever.
const TENANT_TIMEOUT_MS = 60_000;
// Built clients kept per process; a tenant whose client was dropped gets a new one on its next file.
const CLIENTS = 256;

export async function loadStorageConfig(q: Queryable, tenantId: string): Promise<StorageConfigRow | undefined> {
  return (await q.query<StorageConfigRow>('select * from storage_configs where tenant_id = $1', [tenantId]))[0];
}

/**
 * The store over a tenant's bucket. Its endpoint is the tenant's choice, so in production the
 * connections refuse private and loopback addresses (the rule and operator switch of webhooks).
 */
export function tenantBucketStore(app: App, b: TenantBucket, opts: { timeoutMs?: number; maxAttempts?: number } = {}): BlobStore {
  return s3BlobStore({
    endpoint: b.endpoint_url ?? undefined,
    bucket: b.bucket,
    region: b.region,
    accessKeyId: b.access_key,
    secretAccessKey: b.secret_key,
    forcePathStyle: !!b.endpoint_url,
    targets: targetRule(app.config),
    timeoutMs: opts.timeoutMs ?? TENANT_TIMEOUT_MS,
    maxAttempts: opts.maxAttempts,
  });
}

// Clients belong to one running App (tests start several in one process). An entry is only
// used while its config is unchanged (same updated_at), so another process's PUT is seen too.
const perApp = new WeakMap<App, LRUCache<string, { updatedAt: number; store: BlobStore }>>();

/** The store holding the tenant's files: its own bucket when it configured one, else the platform's. */
export async function storeFor(app: App, tenantId: string): Promise<BlobStore> {
  const row = await loadStorageConfig(app.platform, tenantId);
  if (!row) return app.blobs;
  let cache = perApp.get(app);
  if (!cache) perApp.set(app, (cache = new LRUCache({ max: CLIENTS })));
  const updatedAt = new Date(row.updated_at).getTime();
  const cached = cache.get(tenantId);
  if (cached?.updatedAt === updatedAt) return cached.store;
  // Replaced clients are not closed: a request may still be using one; they go with their sockets.
  const store = tenantBucketStore(app, {
    ...row,
    access_key: app.secrets.decrypt(row.access_key_sealed),
    secret_key: app.secrets.decrypt(row.secret_key_sealed),
  });
  cache.set(tenantId, { updatedAt, store });
  return store;
}

/** Drops the tenant's cached client once its config changed or went. */
export function forgetTenantStore(app: App, tenantId: string): void {
  perApp.get(app)?.delete(tenantId);
}

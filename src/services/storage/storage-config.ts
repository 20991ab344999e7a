import { randomBytes } from 'node:crypto';
import type { AuthedCtx } from '../../core/context.ts';
import { badRequest } from '../../core/errors.ts';
import { iso, newId } from '../../core/ids.ts';
import type { BlobStore } from '../../ports/blobs/blobs.ts';
import { checkTargetUrl, targetRule } from '../../ports/public-target.ts';
import { forgetTenantStore, loadStorageConfig, tenantBucketStore, type TenantBucket } from './tenant-store.ts';

export interface StorageConfigInput extends Omit<TenantBucket, 'endpoint_url'> {
  backend: 's3';
  endpoint_url?: string | null;
}

// The self-test answers the PUT: a short budget per request and no retries.
const SELF_TEST_TIMEOUT_MS = 15_000;

/** Enough of the access key to recognise it: its last four characters. */
const mask = (key: string) => (key.length > 8 ? `****${key.slice(-4)}` : '****');

/** The config without its keys; `backend: "platform"` when the tenant's files use the platform's store. */
export async function getStorageConfig(ctx: AuthedCtx) {
  const row = await loadStorageConfig(ctx.app.platform, ctx.tenant.id);
  return {
    configured: !!row,
    backend: row ? row.backend : 'platform',
    endpoint_url: row?.endpoint_url ?? null,
    bucket: row?.bucket ?? null,
    region: row?.region ?? null,
    access_key_masked: row ? mask(ctx.app.secrets.decrypt(row.access_key_sealed)) : null,
    created_at: iso(row?.created_at),
    updated_at: iso(row?.updated_at),
  } as const;
}

const s3Error = (err: unknown) => {
  const e = err as Error;
  return `${e.name}: ${e.message || 'no message'}`;
};

/** Writes, reads back and deletes a probe object; throws 400 naming the step that failed. */
async function selfTest(store: BlobStore): Promise<void> {
  const key = `.orgmem-probe/${newId()}`;
  const probe = randomBytes(32);
  let step = 'write';
  try {
    await store.put(key, probe, 'application/octet-stream');
    step = 'read';
    const back = await store.get(key);
    if (!back) throw new Error('the probe object was not found after writing it');
    if (!back.body.equals(probe)) throw new Error('the probe object came back with different bytes');
    step = 'delete';
    await store.delete([key]);
  } catch (err) {
    throw badRequest(`Storage self-test failed at ${step}: ${s3Error(err)}`);
  }
}

/** Saves the bucket only after a probe object could be written, read back and deleted with it. */
export async function putStorageConfig(ctx: AuthedCtx, input: StorageConfigInput) {
  const bucket: TenantBucket = { ...input, endpoint_url: input.endpoint_url?.replace(/\/+$/, '') ?? null };
  // A tenant-chosen URL the server calls: the rule of every such address (public-target.ts).
  if (bucket.endpoint_url) {
    await checkTargetUrl(targetRule(ctx.app.config), new URL(bucket.endpoint_url)).catch((err: Error) => {
      throw badRequest(`The storage endpoint is not allowed: ${err.message}`);
    });
  }
  const store = tenantBucketStore(ctx.app, bucket, { timeoutMs: SELF_TEST_TIMEOUT_MS, maxAttempts: 1 });
  try {
    await selfTest(store);
  } finally {
    await store.close();
  }
  await ctx.app.platform.query(
    `insert into storage_configs (tenant_id, backend, endpoint_url, bucket, region, access_key_sealed, secret_key_sealed)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (tenant_id) do update set backend = excluded.backend, endpoint_url = excluded.endpoint_url, bucket = excluded.bucket,
       region = excluded.region, access_key_sealed = excluded.access_key_sealed, secret_key_sealed = excluded.secret_key_sealed,
       updated_at = excluded.updated_at`,
    [
      ctx.tenant.id,
      input.backend,
      bucket.endpoint_url,
      bucket.bucket,
      bucket.region,
      ctx.app.secrets.encrypt(bucket.access_key),
      ctx.app.secrets.encrypt(bucket.secret_key),
    ],
  );
  forgetTenantStore(ctx.app, ctx.tenant.id);
  return getStorageConfig(ctx);
}

/**
 * Back to the platform's store. Deleting no config is not an error. Files already in the
 * tenant's bucket stay there: they are the tenant's, and the server no longer has the keys.
 */
export async function deleteStorageConfig(ctx: AuthedCtx): Promise<void> {
  await ctx.app.platform.query('delete from storage_configs where tenant_id = $1', [ctx.tenant.id]);
  forgetTenantStore(ctx.app, ctx.tenant.id);
}

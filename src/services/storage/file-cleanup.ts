import { z } from 'zod';
import type { App } from '../../core/context.ts';
import { isTenantKey } from '../../ports/blobs/blobs.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import { storeFor } from './tenant-store.ts';

/*
 * Files go with the memories that referenced them: a memory delete enqueues the removal of its
 * files in its own transaction (so it happens exactly when the delete commits), and the worker
 * removes them from the store. Account deletion removes the tenant's whole prefix at once.
 */

/** Removes files from the tenant's store; tried for a few hours, so a store outage loses nothing. */
export const fileCleanupJob = defineJob('delete_files', z.object({ tenant_id: z.uuid(), keys: z.array(z.string()) }), { maxAttempts: 10 });

// Keys per job: a collection with many files becomes several small jobs.
const KEYS_PER_JOB = 1000;

/** What a deleted memory row says about its files: its images, and the file it was cut from (`metadata.key`). */
export interface FileRefs {
  images: Array<{ key?: unknown }>;
  metadata: Record<string, unknown>;
}

/**
 * Enqueues the removal of the files `deleted` (rows already deleted in `q`'s transaction)
 * referenced. A file that memories were cut from stays while another memory of the tenant
 * still has its key (the chunks of one file share it). Only the tenant's own keys are taken:
 * metadata is the client's to write.
 */
export async function enqueueFileCleanup(q: Queryable, app: App, tenantId: string, deleted: FileRefs[]): Promise<void> {
  const own = (k: unknown): k is string => typeof k === 'string' && isTenantKey(k, tenantId);
  const images = deleted.flatMap((r) => r.images.map((i) => i.key)).filter(own);
  const sources = [...new Set(deleted.map((r) => r.metadata.key).filter(own))];
  const kept = sources.length
    ? new Set(
        (
          await q.query<{ key: string }>(
            `select distinct metadata->>'key' as key from memories where tenant_id = $1 and metadata ? 'key' and metadata->>'key' = any($2::text[])`,
            [tenantId, sources],
          )
        ).map((r) => r.key),
      )
    : new Set<string>();
  const keys = [...new Set([...images, ...sources.filter((k) => !kept.has(k))])];
  for (let i = 0; i < keys.length; i += KEYS_PER_JOB) {
    await app.jobs.enqueue(q, fileCleanupJob, { tenant_id: tenantId, keys: keys.slice(i, i + KEYS_PER_JOB) });
  }
}

/**
 * The job: deletes the keys from the tenant's store, and from the platform's as well when the
 * tenant has its own (files written before it switched). Missing keys are fine, keys outside
 * the tenant's namespace are never touched; a failure throws, so the queue tries again.
 */
export async function deleteFiles(app: App, tenantId: string, keys: string[]): Promise<void> {
  keys = keys.filter((k) => isTenantKey(k, tenantId));
  if (!keys.length) return;
  const store = await storeFor(app, tenantId);
  await store.delete(keys);
  if (store !== app.blobs) await app.blobs.delete(keys);
}

/**
 * Account deletion: every file under the tenant's prefix, before its rows go (its storage
 * config goes with them, so this cannot wait for a job). A failure of the platform's store
 * fails the deletion; the tenant's own bucket is the tenant's, so a failure there (revoked
 * keys) is logged and does not keep the account alive.
 */
export async function deleteTenantFiles(app: App, tenantId: string): Promise<void> {
  const prefix = `${tenantId}/`;
  const store = await storeFor(app, tenantId);
  if (store !== app.blobs) {
    await store.deletePrefix(prefix).catch((err: Error) => app.log.warn({ tenant: tenantId, err }, "files in the tenant's own bucket not deleted"));
  }
  const n = await app.blobs.deletePrefix(prefix);
  if (n) app.log.info({ tenant: tenantId, files: n }, 'account files deleted');
}

import { z } from 'zod';
import type { App } from '../../core/context.ts';
import { newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import type { Memory } from '../../schemas/memory.ts';
import { controlQueryable } from '../tenant-db/tenant-app.ts';

export type MemoryEventType = 'memory.created' | 'memory.updated' | 'memory.retracted' | 'memory.deleted';
/** A deleted memory is sent as its id only. */
export type EventMemory = Memory | { id: string };

/** One event to the tenant's webhook. Best effort: a few tries with backoff, then it is dropped. */
export const webhookJob = defineJob('webhook_deliver', z.object({ tenant_id: z.uuid(), event: z.object({ id: z.string(), type: z.string() }).loose() }), {
  maxAttempts: 3,
});

/**
 * Emits one webhook event per memory (bulk included), as delivery jobs enqueued in the
 * write's own transaction `q`: an event exists exactly when its write commits. Every memory
 * write function calls this; a tenant without a webhook costs one indexed lookup. `memories`
 * may be a loader, so a write that would have to read the affected ids (collection delete)
 * reads them only when someone listens.
 */
export async function emitMemoryEvents(
  q: Queryable,
  ctx: { app: App; tenant: { id: string } },
  type: MemoryEventType,
  collection: string,
  memories: EventMemory[] | (() => Promise<EventMemory[]>),
): Promise<void> {
  const [hook] = await controlQueryable(ctx.app, q).query('select 1 from webhooks where tenant_id = $1', [ctx.tenant.id]);
  if (!hook) return;
  const list = typeof memories === 'function' ? await memories() : memories;
  const created_at = new Date().toISOString();
  for (const memory of list) {
    const event = { id: newId(), type, created_at, data: { collection, memory } };
    await ctx.app.jobs.enqueue(q, webhookJob, { tenant_id: ctx.tenant.id, event });
  }
}

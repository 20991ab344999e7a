import type { App } from '../../core/context.ts';
import { newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Memory } from '../../schemas/memory.ts';
import { controlQueryable } from '../tenant-db/tenant-app.ts';
import { hookState, queueEvents } from './webhook-outbox.ts';

export type MemoryEventType = 'memory.created' | 'memory.updated' | 'memory.retracted' | 'memory.quarantined' | 'memory.deleted';
/** A deleted memory is sent as its id only. */
export type EventMemory = Memory | { id: string };

/**
 * Emits one webhook event per memory (bulk included) into the tenant's outbox, in the write's
 * own transaction `q`: an event exists exactly when its write commits. Every memory write
 * function calls this; a tenant without a webhook costs one indexed lookup. `memories` may be a
 * loader, so a write that would have to read the affected ids (collection delete) reads them only
 * when someone listens.
 */
export async function emitMemoryEvents(
  q: Queryable,
  ctx: { app: App; tenant: { id: string } },
  type: MemoryEventType,
  collection: string,
  memories: EventMemory[] | (() => Promise<EventMemory[]>),
): Promise<void> {
  const control = controlQueryable(ctx.app, q);
  const hook = await hookState(control, ctx.tenant.id);
  if (!hook) return;
  const list = typeof memories === 'function' ? await memories() : memories;
  const created_at = new Date().toISOString();
  const events = list.map((memory) => ({ id: newId(), type, created_at, data: { collection, memory } }));
  await queueEvents(ctx.app, q, control, ctx.tenant.id, hook, events);
}

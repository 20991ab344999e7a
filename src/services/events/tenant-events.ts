import type { App } from '../../core/context.ts';
import { newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { controlQueryable } from '../tenant-db/tenant-app.ts';
import { hookState, queueEvents } from './webhook-outbox.ts';

/**
 * The webhook events that are not about one memory (docs/webhooks.md, "Events"): changes to who
 * belongs to the organization and what it decided about proposed memories.
 */
export const TENANT_EVENT_TYPES = [
  'person.role_changed',
  'person.suspended',
  'person.removed',
  'promotion.proposed',
  'promotion.accepted',
  'promotion.rejected',
] as const;
export type TenantEventType = (typeof TENANT_EVENT_TYPES)[number];

/** Emits one event into the tenant's outbox in the write's own transaction `q`, as memory events are. */
export async function emitTenantEvent(
  q: Queryable,
  ctx: { app: App; tenant: { id: string } },
  type: TenantEventType,
  data: Record<string, unknown>,
): Promise<void> {
  const control = controlQueryable(ctx.app, q);
  const hook = await hookState(control, ctx.tenant.id);
  if (!hook) return;
  const event = { id: newId(), type, created_at: new Date().toISOString(), data };
  await queueEvents(ctx.app, q, control, ctx.tenant.id, hook, [event]);
}

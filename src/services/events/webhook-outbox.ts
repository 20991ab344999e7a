import { z } from 'zod';
import type { App } from '../../core/context.ts';
import { conflict } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import { PrivateTargetError, targetRule } from '../../ports/public-target.ts';
import type { deadLetterList } from '../../schemas/webhooks.ts';
import { postWebhook, signature, WEBHOOK_TIMEOUT_MS } from './webhook-http.ts';

/*
 * A tenant's webhook events wait in its outbox (`webhook_events`) and one flush job per tenant
 * delivers them one at a time, oldest first (docs/webhooks.md, "Delivery"). A receiver that keeps
 * failing is backed off, then suspended: it holds at most one worker for one timeout at a time,
 * whatever the tenant writes, and the jobs table holds one job for it, not one per event.
 */

/** Tries of one event before it becomes a dead letter. */
export const EVENT_TRIES = 3;
/** Failed tries in a row after which the webhook is suspended. */
export const SUSPEND_AFTER = 10;
/** Seconds before the next try after `failures` failed tries in a row: 5 s doubling, at most 10 minutes. */
export const webhookBackoffSeconds = (failures: number) => Math.min(600, 5 * 2 ** Math.max(0, failures - 1));
/** How long one flush delivers before it gives its worker back and queues the next. */
const FLUSH_BUDGET_MS = 20_000;
/** How long a flush holds the webhook against a second flush: longer than a try's timeout. */
const LEASE_SECONDS = Math.ceil((WEBHOOK_TIMEOUT_MS * 3) / 1000);
/** Dead letters are kept this many days, and at most this many a tenant (the newest). */
export const DEAD_LETTER_DAYS = 7;
export const DEAD_LETTER_MAX = 10_000;
/** A pending event not delivered within this many hours becomes a dead letter. */
const PENDING_HOURS = 24;

export const webhookFlushJob = defineJob('webhook_flush', z.object({ tenant_id: z.uuid() }), { lane: 'webhook' });

/** Queues the tenant's flush (once: a waiting flush keeps its time), at `runAt` or now. */
export const enqueueFlush = (app: App, q: Queryable, tenantId: string, runAt?: Date) =>
  app.jobs.enqueue(q, webhookFlushJob, { tenant_id: tenantId }, { key: `webhook_flush:${tenantId}`, runAt });

export interface OutgoingEvent {
  id: string;
  type: string;
  created_at: string;
}

/** The tenant's webhook as a write finds it: whether it is suspended, and until when it is backed off. */
export interface HookState {
  suspended: boolean;
  next_try_at: Date | null;
}

/** Reads the tenant's webhook for a write, or null when it has none (one indexed lookup). */
export async function hookState(control: Queryable, tenantId: string): Promise<HookState | null> {
  const [hook] = await control.query<HookState>('select suspended_at is not null as suspended, next_try_at from webhooks where tenant_id = $1', [tenantId]);
  return hook ?? null;
}

/**
 * Puts events in the tenant's outbox in the write's transaction (`control`, where webhooks live;
 * `q`, where the write's jobs are queued) and queues its flush. A suspended webhook's events are
 * kept as dead letters at once, to replay once it is resumed.
 */
export async function queueEvents(app: App, q: Queryable, control: Queryable, tenantId: string, hook: HookState, events: OutgoingEvent[]): Promise<void> {
  if (!events.length) return;
  await control.query(
    `insert into webhook_events (tenant_id, id, type, body, created_at, state, dead_at, last_error)
     select $1, e.id, e.type, e.body, $5::timestamptz, $6, case when $6 = 'dead' then now() end, $7
       from unnest($2::uuid[], $3::text[], $4::text[]) as e (id, type, body)`,
    [
      tenantId,
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e)),
      events[0]!.created_at,
      hook.suspended ? 'dead' : 'pending',
      hook.suspended ? 'The webhook was suspended when the event happened' : null,
    ],
  );
  if (!hook.suspended) await enqueueFlush(app, q, tenantId, hook.next_try_at ?? undefined);
}

interface Hook {
  url: string;
  secret_sealed: string;
  next_try_at: Date | null;
}

interface PendingEvent {
  id: string;
  type: string;
  body: string;
}

/**
 * One run of the tenant's flush: delivers its pending events in order until none is left, a try
 * fails, or FLUSH_BUDGET_MS has passed (then it queues the next run, giving its worker back). A
 * failed try counts against the event (EVENT_TRIES, then it is a dead letter) and against the
 * webhook: the next run waits `webhookBackoffSeconds`, and SUSPEND_AFTER failures in a row, or a target
 * refused by the address rule, suspend it. A second run while one holds the webhook comes back a
 * second later, so an event queued as the first one finishes is not left waiting.
 */
export async function flushWebhook(app: App, tenantId: string): Promise<void> {
  const [hook] = await app.platform.query<Hook>(
    `update webhooks set flushing_until = now() + make_interval(secs => $2)
      where tenant_id = $1 and suspended_at is null and (flushing_until is null or flushing_until < now())
      returning url, secret_sealed, next_try_at`,
    [tenantId, LEASE_SECONDS],
  );
  if (!hook) {
    const [held] = await app.platform.query<{ suspended: boolean }>('select suspended_at is not null as suspended from webhooks where tenant_id = $1', [
      tenantId,
    ]);
    if (held && !held.suspended) await enqueueFlush(app, app.platform, tenantId, new Date(Date.now() + 1000));
    return;
  }
  try {
    if (hook.next_try_at && hook.next_try_at.getTime() > Date.now()) {
      await enqueueFlush(app, app.platform, tenantId, hook.next_try_at);
      return;
    }
    const started = Date.now();
    for (;;) {
      if (Date.now() - started > FLUSH_BUDGET_MS) {
        await enqueueFlush(app, app.platform, tenantId);
        return;
      }
      const [event] = await app.platform.query<PendingEvent>(
        `select id, type, body from webhook_events where tenant_id = $1 and state = 'pending' order by created_at, id limit 1`,
        [tenantId],
      );
      if (!event) return;
      await app.platform.query('update webhooks set flushing_until = now() + make_interval(secs => $2) where tenant_id = $1', [tenantId, LEASE_SECONDS]);
      const failure = await deliver(app, tenantId, hook, event);
      if (failure === null) {
        await app.platform.transaction(async (tx) => {
          await tx.query('delete from webhook_events where tenant_id = $1 and id = $2', [tenantId, event.id]);
          await tx.query('update webhooks set failures = 0, next_try_at = null, last_delivered_at = now() where tenant_id = $1 and url = $2', [
            tenantId,
            hook.url,
          ]);
        });
        continue;
      }
      await recordFailure(app, tenantId, hook.url, event, failure);
      return;
    }
  } finally {
    await app.platform.query('update webhooks set flushing_until = null where tenant_id = $1', [tenantId]);
  }
}

interface Failure {
  /** A sentence naming the event and why, never the receiver's body. */
  reason: string;
  /** The address rule refused the target: it stays refused. */
  refused: boolean;
}

/** One try of one event at the webhook: null when the receiver answered 2xx. */
async function deliver(app: App, tenantId: string, hook: Hook, event: PendingEvent): Promise<Failure | null> {
  const outcome = await sendSigned(app, hook, event.body, event.type, event.id);
  if (outcome.delivered) return null;
  if (outcome.refused) app.log.warn({ tenantId, event: event.id, reason: outcome.error }, 'webhook target refused');
  return { reason: `Event ${event.id} (${event.type}) failed: ${outcome.error}`, refused: outcome.refused };
}

export type SendOutcome = { delivered: true; status: number } | { delivered: false; status: number | null; error: string; refused: boolean };

/** POSTs one body signed with the webhook's secret, as every delivery does (docs/webhooks.md, "Body and headers"). */
export async function sendSigned(app: App, hook: { url: string; secret_sealed: string }, raw: string, type: string, id: string): Promise<SendOutcome> {
  try {
    const status = await postWebhook(
      hook.url,
      raw,
      { 'X-Service-Signature': signature(app.secrets.decrypt(hook.secret_sealed), raw), 'X-Service-Event': type, 'X-Service-Delivery': id },
      targetRule(app.config),
    );
    if (status >= 200 && status < 300) return { delivered: true, status };
    return { delivered: false, status, error: `the target answered ${status}`, refused: false };
  } catch (err) {
    if (err instanceof PrivateTargetError) return { delivered: false, status: null, error: `the target is refused, ${err.message}`, refused: true };
    const timedOut = (err as Error).name === 'TimeoutError';
    return {
      delivered: false,
      status: null,
      error: timedOut ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : 'the target could not be reached',
      refused: false,
    };
  }
}

/** Counts a failed try against the event and the webhook, then backs the webhook off or suspends it. */
async function recordFailure(app: App, tenantId: string, url: string, event: PendingEvent, failure: Failure): Promise<void> {
  await app.platform.transaction(async (tx) => {
    await tx.query(
      `update webhook_events set attempts = attempts + 1, last_error = $3,
              state = case when attempts + 1 >= $4 then 'dead' else state end,
              dead_at = case when attempts + 1 >= $4 then now() else dead_at end
        where tenant_id = $1 and id = $2`,
      [tenantId, event.id, failure.reason, EVENT_TRIES],
    );
    const [hook] = await tx.query<{ failures: number }>(
      `update webhooks set failures = failures + 1, last_error = $3, last_error_at = now() where tenant_id = $1 and url = $2 returning failures`,
      [tenantId, url, failure.reason],
    );
    if (!hook) return;
    if (failure.refused || hook.failures >= SUSPEND_AFTER) {
      const why = failure.refused ? failure.reason : `${hook.failures} tries in a row failed; the last: ${failure.reason}`;
      await suspend(tx, tenantId, why);
      return;
    }
    const next = new Date(Date.now() + webhookBackoffSeconds(hook.failures) * 1000);
    await tx.query('update webhooks set next_try_at = $2 where tenant_id = $1', [tenantId, next]);
    await enqueueFlush(app, tx, tenantId, next);
  });
}

/** Suspends the webhook with the reason; its pending events become dead letters, to replay once it is resumed. */
async function suspend(tx: Queryable, tenantId: string, reason: string): Promise<void> {
  await tx.query('update webhooks set suspended_at = now(), suspended_reason = $2, next_try_at = null where tenant_id = $1', [tenantId, reason]);
  await tx.query(
    `update webhook_events set state = 'dead', dead_at = now(), last_error = coalesce(last_error, 'The webhook was suspended before the event was delivered')
      where tenant_id = $1 and state = 'pending'`,
    [tenantId],
  );
}

/** Ends the suspension and the back-off; pending events go out at once. */
export async function resumeDeliveries(app: App, tenantId: string): Promise<boolean> {
  return app.platform.transaction(async (tx) => {
    const [hook] = await tx.query(
      'update webhooks set suspended_at = null, suspended_reason = null, failures = 0, next_try_at = null where tenant_id = $1 returning tenant_id',
      [tenantId],
    );
    if (hook) await enqueueFlush(app, tx, tenantId);
    return !!hook;
  });
}

/** The tenant's dead letters, newest first. */
export async function listDeadLetters(app: App, tenantId: string, limit: number): Promise<z.infer<typeof deadLetterList>> {
  const rows = await app.platform.query<{ id: string; type: string; created_at: Date; attempts: number; last_error: string | null; dead_at: Date }>(
    `select id, type, created_at, attempts, last_error, dead_at from webhook_events where tenant_id = $1 and state = 'dead'
      order by dead_at desc, created_at desc, id desc limit $2`,
    [tenantId, limit],
  );
  const [count] = await app.platform.query<{ n: number }>(`select count(*)::int as n from webhook_events where tenant_id = $1 and state = 'dead'`, [tenantId]);
  return { events: rows.map((r) => ({ ...r, created_at: iso(r.created_at)!, dead_at: iso(r.dead_at)! })), total: count!.n };
}

/** Puts dead letters (the named ones, or all) back in the outbox as new, and queues the flush; answers how many. */
export async function replayDeadLetters(app: App, tenantId: string, ids: string[] | undefined): Promise<number> {
  return app.platform.transaction(async (tx) => {
    const [hook] = await tx.query<{ suspended: boolean }>('select suspended_at is not null as suspended from webhooks where tenant_id = $1', [tenantId]);
    if (hook?.suspended) throw conflict('The webhook is suspended: resume it first (POST /v1/memory/webhook/resume)');
    const replayed = await tx.query(
      `update webhook_events set state = 'pending', attempts = 0, last_error = null, dead_at = null
        where tenant_id = $1 and state = 'dead' and ($2::uuid[] is null or id = any($2::uuid[])) returning id`,
      [tenantId, ids ?? null],
    );
    if (replayed.length) await enqueueFlush(app, tx, tenantId);
    return replayed.length;
  });
}

/** How many events wait and how many are dead letters. */
export async function outboxCounts(app: App, tenantId: string): Promise<{ pending: number; dead_letters: number }> {
  const [row] = await app.platform.query<{ pending: number; dead_letters: number }>(
    `select count(*) filter (where state = 'pending')::int as pending, count(*) filter (where state = 'dead')::int as dead_letters
       from webhook_events where tenant_id = $1`,
    [tenantId],
  );
  return row!;
}

/**
 * The outbox's bounds, swept hourly: a pending event not delivered within PENDING_HOURS becomes a
 * dead letter, and dead letters are kept DEAD_LETTER_DAYS, at most DEAD_LETTER_MAX a tenant.
 */
export async function sweepOutbox(platform: Queryable): Promise<number> {
  const expired = await platform.query(
    `update webhook_events set state = 'dead', dead_at = now(), last_error = coalesce(last_error, 'Not delivered within ${PENDING_HOURS} hours')
      where state = 'pending' and created_at < now() - make_interval(hours => $1) returning id`,
    [PENDING_HOURS],
  );
  const old = await platform.query(`delete from webhook_events where state = 'dead' and dead_at < now() - make_interval(days => $1) returning id`, [
    DEAD_LETTER_DAYS,
  ]);
  const over = await platform.query(
    `delete from webhook_events e using (
       select tenant_id, id from (select tenant_id, id, row_number() over (partition by tenant_id order by dead_at desc, id desc) as n
                                    from webhook_events where state = 'dead') r where n > $1) x
      where e.tenant_id = x.tenant_id and e.id = x.id returning e.id`,
    [DEAD_LETTER_MAX],
  );
  return expired.length + old.length + over.length;
}

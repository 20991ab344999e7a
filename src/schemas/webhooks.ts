import { z } from 'zod';
import { timestamp } from './fields.ts';

/** A tenant's webhook and how its deliveries go (docs/webhooks.md, "Delivery"). */
export const WEBHOOK_STATES = ['none', 'active', 'backing_off', 'suspended'] as const;

export const webhookView = z.object({
  url: z.string().nullable().describe('Where the events are sent; null when no webhook is configured'),
  created_at: timestamp.nullable(),
  state: z
    .enum(WEBHOOK_STATES)
    .describe('none: no webhook; active: delivering; backing_off: tries failed, the next waits until next_try_at; suspended: no tries until resumed'),
  last_delivered_at: timestamp.nullable().describe('When an event was last delivered (a 2xx answer)'),
  last_error: z
    .string()
    .nullable()
    .describe('Why the last failed try failed (a refused target, a status, a timeout); each try is recorded, so a later success does not clear it'),
  last_error_at: timestamp.nullable(),
  failures: z.number().int().describe('Failed tries in a row; a delivery sets it back to 0'),
  next_try_at: timestamp.nullable().describe('While backing off: when the next try is made'),
  suspended_at: timestamp.nullable(),
  suspended_reason: z.string().nullable().describe('Why deliveries were suspended; resuming, or a successful test delivery, ends it'),
  pending: z.number().int().describe('Events waiting to be delivered'),
  dead_letters: z.number().int().describe('Events given up on, kept to replay (GET /v1/memory/webhook/dead-letters)'),
});

export const testDelivery = z.object({
  delivered: z.boolean(),
  status: z.number().int().nullable().describe("The receiver's status, when it answered"),
  error: z.string().nullable().describe('Why the test failed'),
  resumed: z.boolean().describe('A suspended or backed-off webhook was resumed by this successful delivery'),
});

const deadLetter = z.object({
  id: z.string().describe('The event id, as X-Service-Delivery sends it'),
  type: z.string(),
  created_at: timestamp.describe('When the write happened'),
  attempts: z.number().int().describe('Tries made (0 when the webhook was suspended when the event happened)'),
  last_error: z.string().nullable().describe('Why the last try failed, or why none was made'),
  dead_at: timestamp,
});

export const deadLetterList = z.object({ events: z.array(deadLetter), total: z.number().int().describe('Dead letters kept in all') });

import { z } from 'zod';
import { collectionName, timestamp } from './fields.ts';

/** Promotion with review (docs/promotion.md). */

export const PROMOTION_STATES = ['proposed', 'accepted', 'rejected', 'withdrawn'] as const;
export const promotionState = z.enum(PROMOTION_STATES);
export type PromotionState = z.infer<typeof promotionState>;

const who = z.object({ id: z.string(), label: z.string() });

export const promotionSchema = z
  .object({
    id: z.string(),
    state: promotionState,
    from_collection: z.string().describe('The personal collection the memories are proposed from'),
    to_collection: z.string().describe('The team or org collection they are proposed to'),
    memory_ids: z.array(z.string()),
    memories: z
      .array(z.object({ id: z.string(), text: z.string(), category: z.string(), observed_at: timestamp }))
      .describe('The proposed memories as they stand now, for the review (a memory deleted since is left out)'),
    note: z.string().nullable(),
    proposed_by: who.describe('The person who proposed'),
    proposed_by_agent: who.nullable().describe("The person's key that made the call; null when their own session did"),
    reason: z.string().nullable().describe("A rejection's reason"),
    decided_by: who.nullable().describe('The person who accepted, rejected or withdrew; null for a key of no person'),
    decided_by_agent: who.nullable().describe("The key that made that call; null when a person's session did"),
    decided_at: timestamp.nullable(),
    created_memory_ids: z.array(z.string()).describe("An acceptance's copies in the target, in the order of memory_ids"),
    created_at: timestamp,
  })
  .openapi('Promotion');
export type Promotion = z.infer<typeof promotionSchema>;

export const promotionInput = z.object({
  memory_ids: z.array(z.string().max(64)).min(1).max(100).describe('The memories to propose (their ids in from_collection)'),
  from_collection: collectionName.describe('A personal collection of yours'),
  to_collection: collectionName.describe('A team or org collection'),
  note: z.string().trim().max(2000).optional().describe('Why, for the reviewer'),
});

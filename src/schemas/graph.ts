import { z } from 'zod';
import { timestamp } from './fields.ts';
import { memorySchema } from './memory.ts';

/** Shapes of graph memory: remember's facts and the supersession history (docs/graph.md). */
export const factType = z.enum(['fact', 'preference', 'episode']);
export type FactType = z.infer<typeof factType>;

export const extractedFact = z
  .object({
    id: z.string().describe('The stored fact; for a duplicate, the existing fact it repeats'),
    text: z.string(),
    type: factType,
    relation: z.enum(['new', 'duplicate', 'supersedes']),
    supersedes_id: z.string().optional().describe('Present when relation is supersedes: the fact it replaced'),
    expires_at: timestamp.nullable(),
  })
  .openapi('ExtractedFact');
/** What remember did with one extracted fact. */
export type FactOutcome = z.infer<typeof extractedFact>;
export type Relation = FactOutcome['relation'];

export const skipped = z.enum(['spend_cap']).nullable().describe('"spend_cap" when extraction was skipped because the monthly cap is reached');

export const contradiction = z.object({ current: memorySchema, superseded: memorySchema, superseded_at: timestamp }).openapi('Contradiction');

import { z } from 'zod';
import { memorySchema, timestamp } from '../src/schemas.ts';
import { factType } from '../src/services/llm-calls.ts';

/** Shapes shared by the graph-memory procedures (decisions.md "Search, graph memory, reports"). */
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

export const skipped = z.enum(['spend_cap']).nullable().describe('"spend_cap" when extraction was skipped because the monthly cap is reached');

export const contradiction = z.object({ current: memorySchema, superseded: memorySchema, superseded_at: timestamp }).openapi('Contradiction');

import { z } from 'zod';
import { defineJob } from '../../ports/jobs/jobs.ts';

/**
 * The tenant LLM's second opinion on memories the offline detector found suspect but not
 * steering (docs/trust.md, "Second opinion"): queued by the write that stored them, run in the llm
 * lane. It may hold a memory, never release one.
 */
export const secondOpinionJob = defineJob('second_opinion', z.object({ tenant_id: z.uuid(), memory_ids: z.array(z.uuid()).min(1).max(250) }), {
  maxAttempts: 3,
  lane: 'llm',
});

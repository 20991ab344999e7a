import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { extractedFact, skipped } from '../src/schemas/graph.ts';
import { collectionOfJob, getJob } from '../src/services/graph/extraction-jobs.ts';

export default defineProcedure({
  name: 'graph.extractJob',
  summary: 'State of a remember extraction job',
  description:
    'States: queued -> processing -> done, or failed after 3 tries (backing off). Between tries the job is queued ' +
    'again with the last error. A failed job keeps its raw memory (memory_id).',
  rest: { method: 'GET', path: '/v1/memory/extract/job/{job_id}', status: 200 },
  access: 'read',
  collection: { of: collectionOfJob, permission: 'read' },
  mcp: {
    tool: 'get_extraction_job',
    title: 'Check a remember job',
    description: 'Check a remember job by the job_id remember answered: its state and, once done, the facts it stored.',
  },
  errors: { NOT_FOUND: 'No job of this tenant has this id' },
  input: z.object({ job_id: z.string().describe('The job id remember answered') }),
  output: z
    .object({
      job_id: z.string(),
      collection: z.string(),
      memory_id: z.string().describe('The raw memory remember stored'),
      state: z.enum(['queued', 'processing', 'done', 'failed']),
      facts: z.array(extractedFact),
      complete: z.boolean().describe('true once done or failed'),
      skipped,
      error: z.string().nullable(),
      attempts: z.number().int(),
      created_at: timestamp,
      updated_at: timestamp,
    })
    .openapi('ExtractionJob'),
  handler: (ctx, input) => getJob(ctx, input.job_id),
});

import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionOfJob, retryJob } from '../src/services/graph/extraction-jobs.ts';
import extractJob from './graph.extract-job.ts';

export default defineProcedure({
  name: 'graph.retryJob',
  summary: 'Retry a failed remember extraction job',
  description:
    'Puts a failed job back in the queue with its tries reset and its error cleared; it then runs as a new job ' +
    "(queued -> processing -> done or failed). Needs read and write on the job's collection.",
  rest: { method: 'POST', path: '/v1/memory/extract/job/{job_id}/retry', status: 202 },
  access: 'write',
  // Write to queue it again, and read: the answer is the job with its facts.
  collection: [
    { of: collectionOfJob, permission: 'read' },
    { of: collectionOfJob, permission: 'write' },
  ],
  errors: {
    NOT_FOUND: 'No job of this tenant has this id',
    CONFLICT: 'The job is not failed (queued, processing or done)',
  },
  input: extractJob.input,
  output: extractJob.output,
  handler: (ctx, input) => retryJob(ctx, input.job_id),
});

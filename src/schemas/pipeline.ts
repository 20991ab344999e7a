import { z } from 'zod';

const count = z.number().int();

/** Background work that needs a person: failed, or queued or processing for longer than it should take. */
export const pipelineJobCounts = z
  .object({
    failed_extractions: count.describe('Remember extraction jobs that failed after their last try'),
    stuck_extractions: count.describe('Extraction jobs queued or processing with no progress for over 15 minutes'),
    failed_files: count.describe('Ingested files that failed after their last try'),
    stuck_files: count.describe('Ingested files queued or processing with no progress for over 15 minutes'),
    failed_proxy_stores: count.describe(
      "Chat proxy turns that could not be stored for remember in the last 7 days (the embedder down; a stream's answer could not say so)",
    ),
    failed_graph_fills: count.describe(
      "1 when the last try to add the account's memories to the vector graph failed (its searches read exactly meanwhile; its next write tries again), else 0",
    ),
  })
  .openapi('PipelineJobs');

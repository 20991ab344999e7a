import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { ingestBatch } from '../src/schemas/files.ts';
import { collectionOfBatch, getBatch } from '../src/services/files/batches.ts';

export default defineProcedure({
  name: 'ingest.batch',
  summary: 'Progress of an ingest batch: files done, failed and pending, each with its memories or its error',
  rest: { method: 'GET', path: '/v1/memory/ingest/batch/{batch_id}', status: 200 },
  access: 'read',
  collection: { of: collectionOfBatch, permission: 'read' },
  mcp: {
    tool: 'get_ingest_batch',
    title: 'Check a file ingest',
    description: 'Check how a batch of dropped files is being ingested (done, failed, pending), by the batch_id the drop ' + 'answered.',
  },
  errors: { NOT_FOUND: "No such batch (another tenant's batches are not found either)" },
  input: z.object({ batch_id: z.string().describe('Batch id (UUID)') }),
  output: ingestBatch,
  handler: (ctx, { batch_id }) => getBatch(ctx, batch_id),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { pipelineJobCounts } from '../src/schemas/pipeline.ts';
import { accountStats } from '../src/services/access/account.ts';
import { pipelineJobs } from '../src/services/status/pipeline.ts';

export default defineProcedure({
  name: 'admin.stats',
  summary: "The account's usage: collections, memories, stored bytes, memories added in the last 7 and 30 days, and its failed and stuck background work",
  rest: { method: 'GET', path: '/v1/memory/admin/stats', status: 200 },
  access: 'read',
  input: z.object({}),
  output: z.object({
    collections: z.number().int(),
    memories: z.number().int(),
    storage_bytes: z.number().describe('Bytes of memory texts, metadata and attached files'),
    added_7d: z.number().int(),
    added_30d: z.number().int(),
    jobs: pipelineJobCounts,
  }),
  handler: async (ctx) => {
    const [stats, jobs] = await Promise.all([accountStats(ctx), pipelineJobs(ctx.app, ctx.tenant.id)]);
    return { ...stats, jobs };
  },
});

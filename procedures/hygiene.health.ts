import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { pipelineJobCounts } from '../src/schemas/pipeline.ts';
import { collectionHealth } from '../src/services/graph/reports.ts';
import { pipelineJobs } from '../src/services/status/pipeline.ts';
import { C, inCollection } from './collection-path.ts';

const count = z.number().int();

export default defineProcedure({
  name: 'hygiene.health',
  summary: 'Counts that show what in a collection needs attention; an unknown collection is exists=false',
  description:
    'total: every memory; current: neither superseded nor expired; archived, pinned: by flag; stale: not pinned, not ' +
    'archived, updated_at older than stale_days; expired: past valid_to; supersessions: superseded memories; ' +
    "categories: total per category; needs_attention = stale + expired + supersessions. jobs: the collection's failed " +
    'and stuck background work (remember extractions, ingested files), apart from needs_attention.',
  rest: { method: 'GET', path: `${C}/health`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'collection_health',
    title: 'Check a collection',
    description:
      'Health of a collection: totals, stale, expired and superseded memories, per-category counts and failed ' +
      'background jobs. Call it before cleaning a collection up.',
  },
  input: z.object({ ...inCollection, stale_days: z.coerce.number().int().min(0).default(90) }),
  output: z
    .object({
      collection: z.string(),
      exists: z.boolean(),
      total: count,
      current: count,
      archived: count,
      pinned: count,
      stale: count,
      expired: count,
      supersessions: count,
      categories: z.record(z.string(), count),
      needs_attention: count,
      jobs: pipelineJobCounts,
    })
    .openapi('CollectionHealth'),
  handler: async (ctx, input) => {
    const [health, jobs] = await Promise.all([
      collectionHealth(ctx, input.collection, input.stale_days),
      pipelineJobs(ctx.app, ctx.tenant.id, input.collection),
    ]);
    return { ...health, jobs };
  },
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { dedup } from '../src/services/graph/hygiene.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'hygiene.dedup',
  summary: 'Find (dry run) or delete near-duplicate memories',
  description:
    'Considers the 500 most recent current, non-archived memories. Keeper: the pinned one, else the highest importance, ' +
    'then the newest; each keeper takes the memories at least `threshold` similar to it (cosine). Pinned memories are ' +
    'never deleted. A deleted duplicate that had superseded an older fact hands that link to its keeper.',
  rest: { method: 'POST', path: `${C}/dedup`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  readWhen: (input) => input.dry_run,
  mcp: {
    tool: 'dedup_memories',
    title: 'Remove duplicate memories',
    description:
      'Find near-duplicate memories (dry_run true, the default: nothing changes) or, with dry_run false, delete the ' +
      'duplicates and keep the best copy of each. Run the dry run first and show it to the user; delete only when ' +
      'asked.',
    destructive: true,
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({
    ...inCollection,
    threshold: z.number().min(0).max(1).default(0.95),
    dry_run: z.boolean().default(true),
  }),
  output: z.union([
    z.object({
      clusters: z.array(
        z.object({
          keeper: memorySchema,
          duplicates: z.array(memorySchema),
          similarity: z.number().describe('Lowest similarity of a duplicate to its keeper'),
        }),
      ),
    }),
    z.object({ deleted: z.number().int(), ids: z.array(z.string()) }),
  ]),
  handler: (ctx, input) => dedup(ctx, input.collection, input.threshold, input.dry_run),
});

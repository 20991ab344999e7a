import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { ARCHIVE_STALE_MAX, archiveStale } from '../src/services/graph/hygiene.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'hygiene.archiveStale',
  summary: 'Find (dry run) or archive memories not updated for older_than_days',
  description:
    `Skips pinned and archived memories; staleness uses updated_at. One call archives at most ${ARCHIVE_STALE_MAX} memories, ` +
    'the oldest first (would_archive counts them all; ids lists that first batch); call again for the rest.',
  rest: { method: 'POST', path: `${C}/archive-stale`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  readWhen: (input) => input.dry_run,
  mcp: {
    tool: 'archive_stale_memories',
    title: 'Archive stale memories',
    description:
      'Find memories nobody updated for older_than_days (dry_run true, the default: nothing changes) or, with ' +
      'dry_run false, archive them (hidden from search until restored). Run the dry run first; archive only when ' +
      'asked.',
    destructive: true,
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, older_than_days: z.number().int().min(0).default(90), dry_run: z.boolean().default(true) }),
  output: z.union([
    z.object({ would_archive: z.number().int(), ids: z.array(z.string()) }),
    z.object({ archived: z.number().int(), ids: z.array(z.string()) }),
  ]),
  handler: (ctx, input) => archiveStale(ctx, input.collection, input.older_than_days, input.dry_run),
});

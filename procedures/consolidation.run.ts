import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { changesetView } from '../src/schemas/consolidation.ts';
import { getChangeset } from '../src/services/consolidation/changesets.ts';
import { startRun } from '../src/services/consolidation/run.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'consolidation.run',
  summary: 'Start a consolidation run: it proposes a change set (merges, supersessions, archives, validity fixes) for review',
  description:
    "Reads the collection's current memories (the newest 20,000) and proposes changes, each with its evidence: merge " +
    'near-duplicates into one, supersede an outdated fact, archive noise never recalled and of low importance, fix the ' +
    "validity of a superseded fact. With the tenant's LLM configured it proposes merges and supersessions too. The run " +
    'changes no memory (unless the collection set auto_apply for some kinds): poll the change set until it is open, then ' +
    'apply, reject or undo its changes.',
  rest: { method: 'POST', path: `${C}/consolidate`, status: 202 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'consolidate_collection',
    title: 'Propose a clean-up',
    description:
      'Start a consolidation run over a collection: it proposes a change set (duplicates to merge, outdated facts to ' +
      'supersede, noise to archive) and changes nothing. Then read it with get_changeset and show it to the user.',
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({
    ...inCollection,
    similarity: z.number().min(0.5).max(1).optional().describe('The cosine similarity at or above which two memories are near-duplicates (0.9 when left out)'),
  }),
  output: changesetView,
  handler: async (ctx, input) => getChangeset(ctx, input.collection, await startRun(ctx, input.collection, input.similarity)),
});

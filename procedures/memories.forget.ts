import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { forgetFields, forgetResponse } from '../src/schemas/search.ts';
import { forget } from '../src/services/search/related.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.forget',
  summary: 'Semantic forget: delete the memories similar to a query (destructive)',
  description:
    'Deletes up to limit memories of the collection whose cosine similarity to the query is at least min_score, the most ' +
    'similar first, archived and superseded ones included, and answers which ones were deleted.',
  rest: { method: 'POST', path: `${C}/forget`, status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'forget_memory',
    title: 'Forget memories by meaning',
    description:
      'Delete the memories of a collection that match a query by meaning (at least min_score similar, at most limit ' +
      'of them). Call it only when the user asks to forget something; to remove one memory you found, use ' +
      'delete_memory. Deleted memories cannot be restored.',
    destructive: true,
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, ...forgetFields }),
  output: forgetResponse,
  handler: (ctx, input) => forget(ctx, input),
});

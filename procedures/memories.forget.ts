import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
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
  mcp: { tool: 'forget_memory', description: 'Delete the memories of a collection that match a query by meaning (at least min_score similar).' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, ...forgetFields }),
  output: forgetResponse,
  handler: (ctx, input) => forget(ctx, input),
});

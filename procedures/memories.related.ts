import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { relatedFields, searchResponse } from '../src/schemas/search.ts';
import { related } from '../src/services/search/related.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.related',
  summary: 'The memories nearest to this one by embedding (never itself, archived, superseded or expired ones)',
  rest: { method: 'GET', path: `${C}/memories/{id}/related`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  errors: { NOT_FOUND: MISSING_MEMORY },
  input: z.object({ ...memoryPath, ...relatedFields }),
  output: searchResponse,
  handler: (ctx, input) => related(ctx, input),
});

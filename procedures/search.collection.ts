import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { searchFields, searchResponse } from '../src/schemas/search.ts';
import { search } from '../src/services/search/search.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'search.collection',
  summary: 'Search one collection (hybrid vector + full-text by default)',
  description:
    'Superseded and expired memories never appear; archived ones only with include_archived. Filters apply inside both ' +
    'candidate queries, so a filtered search is not cut short. An identical query is answered from a cache (cached: true) ' +
    'until the collection changes.',
  rest: { method: 'POST', path: `${C}/search`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object({ ...inCollection, ...searchFields }),
  output: searchResponse,
  handler: (ctx, { collection, ...input }) => search(ctx, input, { collection, nameCollections: false }),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionSchema } from '../src/schemas/memory.ts';
import { listCollections } from '../src/services/memory/collections.ts';

export default defineProcedure({
  name: 'collections.list',
  summary: 'List collections with their memory counts',
  rest: { method: 'GET', path: '/v1/memory/collections', status: 200 },
  access: 'read',
  mcp: {
    tool: 'list_collections',
    title: 'List collections',
    description:
      'List the collections this agent can see, with descriptions and memory counts. Call it to choose where to ' +
      'store or search when you do not know the collection names.',
  },
  input: z.object({}),
  output: z.array(collectionSchema),
  handler: (ctx) => listCollections(ctx),
});

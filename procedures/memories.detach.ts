import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { detachFile } from '../src/services/files/uploads.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.detach',
  summary: 'Remove one attached file from a memory and from the file store',
  rest: { method: 'DELETE', path: `${C}/memories/{id}/images/{image_index}`, status: 204 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { NOT_FOUND: `${MISSING_MEMORY}; or the memory has no file with that index` },
  input: z.object({
    ...memoryPath,
    image_index: z
      .string()
      .regex(/^\d{1,9}$/, 'must be a non-negative integer')
      .transform(Number)
      .describe('The index of the image entry'),
  }),
  output: noContent,
  handler: async (ctx, { collection, id, image_index }) => {
    await detachFile(ctx, collection, id, image_index);
    return null;
  },
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { OVER_READING_LIMIT, uploadedFiles } from '../src/schemas/files.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { attachFiles } from '../src/services/files/uploads.ts';
import { C, memoryPath, MISSING_MEMORY } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.attach',
  summary: 'Attach files to a memory (multipart); answers the memory with its new image entries',
  rest: { method: 'POST', path: `${C}/memories/{id}/images`, status: 201 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { NOT_FOUND: MISSING_MEMORY, PAYLOAD_TOO_LARGE: 'A file is larger than 10 MB (nothing is stored)', UNPROCESSABLE_CONTENT: OVER_READING_LIMIT },
  input: z.object({ ...memoryPath, files: uploadedFiles }),
  output: memorySchema,
  handler: (ctx, { collection, id, files }) => attachFiles(ctx, collection, id, files),
});

import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { fileFailure, uploadedFiles } from '../src/schemas/files.ts';
import { uploadFolder } from '../src/services/files/uploads.ts';
import { C, inCollection } from './collection-path.ts';
import { NO_FILE_STORED } from './drop.files.ts';

export default defineProcedure({
  name: 'memories.folder',
  summary: 'Upload up to 50 files (multipart); each becomes one memory with its file attached',
  description:
    "Each file's text (cut at 10,000 characters) becomes a memory of category document and source upload, with the file " +
    'in its images. A file that is too large or has no readable text fails alone, listed in failed. When no file can be ' +
    'stored the answer is 422 with errors[] naming each file (path files.<i>, message "<filename>: <reason>"), and nothing is kept.',
  rest: { method: 'POST', path: `${C}/memories/folder`, status: 201 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { UNPROCESSABLE_CONTENT: NO_FILE_STORED },
  input: z.object({ ...inCollection, files: uploadedFiles }),
  output: z.object({
    created: z.number().int(),
    memories: z.array(z.object({ id: z.string(), filename: z.string() })),
    failed: z.array(fileFailure),
  }),
  handler: (ctx, { collection, files }) => uploadFolder(ctx, collection, files),
});

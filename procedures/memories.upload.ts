import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { category, importance, memoryText, metadataObject } from '../src/schemas/fields.ts';
import { fileUpload, formJson, formNumber, OVER_READING_LIMIT } from '../src/schemas/files.ts';
import { memoryCreate, memorySchema, timesInOrder } from '../src/schemas/memory.ts';
import { uploadMemory } from '../src/services/files/uploads.ts';
import { C, inCollection } from './collection-path.ts';

export default defineProcedure({
  name: 'memories.upload',
  summary: 'Store one memory with files attached (multipart); without text, the text is read from the files',
  description:
    'Multipart fields: files (repeatable), text, importance, category, container_tag, metadata (a JSON string), observed_at, valid_from, valid_to. Files ' +
    "are kept in the tenant's file store and listed in the memory's images (this answer and single-memory GET give each a presigned " +
    'URL). Without text, the memory text is what the files hold (PDF, Office, HTML, text, mail; images by OCR and the ' +
    'LLM caption; audio and video by the LLM transcription), cut at 10,000 characters.',
  rest: { method: 'POST', path: `${C}/memories/upload`, status: 201 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: {
    BAD_REQUEST: 'No file was sent, or no text was given and none could be read from the files',
    PAYLOAD_TOO_LARGE: 'A file is larger than 10 MB (nothing is stored)',
    UNPROCESSABLE_CONTENT: OVER_READING_LIMIT,
  },
  input: z
    .object({
      ...inCollection,
      files: z.array(fileUpload).max(50).default([]).describe('The files to attach, each at most 10 MB'),
      text: memoryText.optional(),
      importance: formNumber(importance).default(0.5),
      category: category.default('document'),
      source: z.string().min(1).max(64).default('upload'),
      container_tag: z.string().min(1).max(256).nullable().default(null),
      metadata: formJson(metadataObject).default({}),
      observed_at: memoryCreate.shape.observed_at,
      valid_from: memoryCreate.shape.valid_from,
      valid_to: memoryCreate.shape.valid_to,
    })
    .superRefine(timesInOrder),
  output: memorySchema,
  handler: (ctx, { collection, files, ...fields }) => uploadMemory(ctx, collection, fields, files),
});

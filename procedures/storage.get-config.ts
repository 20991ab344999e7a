import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { getStorageConfig } from '../src/services/storage/storage-config.ts';

/** What GET and PUT answer: the tenant's bucket without its keys, or the platform's store. */
export const storageConfigView = z
  .object({
    configured: z.boolean().describe('Whether the tenant has its own bucket'),
    backend: z.enum(['s3', 'platform']).describe("Where the tenant's files go now: its own S3 bucket, or the platform's store"),
    endpoint_url: z.string().nullable().describe('null: AWS S3 itself (or no bucket configured)'),
    bucket: z.string().nullable(),
    region: z.string().nullable(),
    access_key_masked: z.string().nullable().describe('The last four characters of the access key; the secret key is never returned'),
    created_at: timestamp.nullable(),
    updated_at: timestamp.nullable(),
  })
  .openapi('StorageConfig');

export default defineProcedure({
  name: 'storage.getConfig',
  summary: "The tenant's own file bucket (never its keys), or that its files use the platform's store",
  rest: { method: 'GET', path: '/v1/memory/storage/config', status: 200 },
  access: 'read',
  input: z.object({}),
  output: storageConfigView,
  handler: (ctx) => getStorageConfig(ctx),
});

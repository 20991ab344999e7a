import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { putStorageConfig } from '../src/services/storage/storage-config.ts';
import { storageConfigView } from './storage.get-config.ts';

export default defineProcedure({
  name: 'storage.putConfig',
  summary: 'Keep your files in your own S3 bucket (saved only if a live self-test passes)',
  description:
    'Writes, reads back and deletes a probe object (`.orgmem-probe/<uuid>`) in the bucket first; if a step fails the ' +
    "answer is 400 naming the step and the storage service's error, and nothing is saved. Both keys are stored " +
    'encrypted and never returned. New files go to the bucket from then on; files stored before stay where they are.',
  rest: { method: 'PUT', path: '/v1/memory/storage/config', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { BAD_REQUEST: 'The bucket failed its self-test (write, read or delete), or (production mode) the endpoint is a private or loopback address' },
  input: z.object({
    backend: z.literal('s3').default('s3'),
    endpoint_url: z
      .url({ protocol: /^https?$/ })
      .nullable()
      .optional()
      .describe('An S3-compatible service (MinIO, R2...), addressed path-style; omit for AWS S3'),
    bucket: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/, 'must be 3 to 255 characters of A-Z a-z 0-9 . _ -, starting and ending with a letter or digit'),
    region: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a region name such as us-east-1')
      .default('us-east-1'),
    access_key: z.string().min(1).max(256),
    secret_key: z.string().min(1).max(256),
  }),
  output: storageConfigView,
  handler: (ctx, input) => putStorageConfig(ctx, input),
});

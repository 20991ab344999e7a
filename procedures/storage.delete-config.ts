import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteStorageConfig } from '../src/services/storage/storage-config.ts';

export default defineProcedure({
  name: 'storage.deleteConfig',
  summary: "Remove your own bucket: new files go to the platform's store again (files in your bucket stay there)",
  rest: { method: 'DELETE', path: '/v1/memory/storage/config', status: 204 },
  access: 'write',
  keyRole: 'admin',
  input: z.object({}),
  output: noContent,
  handler: async (ctx) => {
    await deleteStorageConfig(ctx);
    return null;
  },
});
